//! The report's view model: every number pre-formatted, every chart rendered, every value with
//! its provenance. Templates only lay these out; they compute nothing. One module per kind of
//! section; [`build`] puts them together.

mod comparison;
mod counters;
mod fleet;
mod headlines;
mod regressions;
mod samples;
mod sized;
mod timeline;
mod view;

pub(crate) use view::chart;
pub use fleet::FleetView;
pub use view::{Cell, Chart, Context, Headline, PlatformView, Section, Table};

use crate::config::Config;
use crate::gate::GateResult;
use crate::model::Run;
use crate::normalize::platform::Platform;
use crate::normalize::points::{self, Point};
use anyhow::Result;
use std::collections::{BTreeMap, BTreeSet};

/// Options of a report.
pub struct Options<'a> {
    pub title: &'a str,
    pub by: &'a str,
    pub baseline: Option<&'a str>,
    pub filters: &'a [String],
    /// A `linkperf gate --json` result, whose regressions get a section.
    pub gate: Option<GateResult>,
    /// What orders runs for the history section: `source` or `label:NAME`.
    pub history_by: &'a str,
}

/// Builds the whole context.
pub fn build(selected: &[(Run, Platform)], config: &Config, opts: &Options<'_>) -> Result<Context> {
    let by = opts.by;
    let tests: BTreeSet<(String, String)> = selected
        .iter()
        .filter(|(r, _)| r.tool != crate::model::Tool::DevInfo && !r.measurements.is_empty())
        .map(|(r, _)| (r.tool.clone(), r.test.clone()))
        .collect();
    let comparison = comparison::compare(selected, config, opts)?;
    let mut findings: Vec<String> = comparison
        .findings
        .iter()
        .map(|f| {
            format!(
                "{}: {} ({})",
                f.group,
                f.message,
                view::provenance(&f.sources)
            )
        })
        .collect();
    findings.extend(crate::compare::mtu::mtu_findings(selected, by)?);
    // Plausibility and placement (`linkperf check`); below line rate is the comparison's.
    findings.extend(
        crate::check::check(selected, config)
            .into_iter()
            .filter(|f| f.rule != "below_line_rate")
            .map(|f| f.to_string()),
    );
    let (table, only_in_some) = comparison::table(&comparison);
    Ok(Context {
        title: opts.title.to_string(),
        generator: format!("linkperf {}", env!("CARGO_PKG_VERSION")),
        selection: if opts.filters.is_empty() {
            "all stored runs".into()
        } else {
            opts.filters.join(", ")
        },
        by: by.to_string(),
        baseline: comparison.baseline.clone(),
        tests: tests.iter().map(|(_, t)| t.clone()).collect(),
        platforms: platforms(selected, by),
        headlines: headlines::headlines(selected, by, &comparison.groups)?,
        findings,
        sections: sections(selected, by, &tests)?,
        comparison: table,
        only_in_some,
        history: super::history::section(selected, config, opts.history_by)?,
        regressions: opts.gate.as_ref().map(regressions::gate_table),
        counters: counters::table(selected, by),
        fleet: fleet::sections(selected)?,
    })
}

/// Each compared group with its facts (and where they came from), runs and sources.
fn platforms(selected: &[(Run, Platform)], by: &str) -> Vec<PlatformView> {
    let mut platforms: BTreeMap<String, (BTreeSet<String>, usize, BTreeSet<String>)> =
        BTreeMap::new();
    for (r, p) in selected {
        let Some(g) = points::dimension(r, p, by) else {
            continue;
        };
        let e = platforms.entry(g).or_default();
        e.1 += 1;
        e.2.insert(r.source.clone());
        for (k, v) in p {
            if k != by {
                e.0.insert(format!("{k}: {} ({})", v.value, v.from.as_str()));
            }
        }
        if let Some(d) = &r.device {
            e.0.insert(format!("device: {d}"));
        }
    }
    platforms
        .into_iter()
        .map(|(name, (facts, runs, sources))| PlatformView {
            name,
            facts: facts.into_iter().collect(),
            runs,
            sources: sources.into_iter().collect(),
        })
        .collect()
}

/// The sections, one per test.
fn sections(
    selected: &[(Run, Platform)],
    by: &str,
    tests: &BTreeSet<(String, String)>,
) -> Result<Vec<Section>> {
    let groups: BTreeSet<String> = selected
        .iter()
        .filter_map(|(r, p)| points::dimension(r, p, by))
        .collect();
    let colours: BTreeMap<String, usize> = groups
        .iter()
        .enumerate()
        .map(|(i, g)| (g.clone(), i * 3))
        .collect();
    let line_rates: BTreeSet<String> = selected
        .iter()
        .filter_map(|(_, p)| p.get("link_speed_gbps").map(|r| r.value.clone()))
        .collect();
    // Points of each charted metric, computed once for all sections.
    let by_metric: BTreeMap<&str, Vec<Point>> = sized::CHARTED_METRICS
        .into_iter()
        .map(|m| Ok((m, points::points(selected, by, Some(m))?)))
        .collect::<Result<_>>()?;
    let mut sections = Vec::new();
    // A sized section covers every tool that ran the test (perftest and `linkperf bench` both
    // run `ib_write_bw`): one section per test name.
    let mut sized_done = BTreeSet::new();
    for (tool, test) in tests {
        let s = match tool.as_str() {
            "iperf2" | "iperf3" => timeline::iperf_section(test, selected, by, &colours)?,
            "ibping" => None,
            _ if !sized_done.insert(test.as_str()) => None,
            _ => match sized::sized_section(test, &by_metric, &colours, &line_rates)? {
                Some(mut s) => {
                    let runs: Vec<&(Run, Platform)> = selected
                        .iter()
                        .filter(|(r, _)| &r.test == test)
                        .filter(|(r, _)| {
                            r.measurements
                                .iter()
                                .any(|m| m.row_kind.as_deref() == Some("interval"))
                        })
                        .collect();
                    s.charts
                        .extend(timeline::timeline_chart(test, &runs, by, &colours)?);
                    s.charts.extend(samples::sample_percentile_chart(
                        test, selected, by, &colours,
                    )?);
                    Some(s)
                }
                None => None,
            },
        };
        sections.extend(s);
    }
    sections.extend(timeline::ibping_section(selected)?);
    Ok(sections)
}

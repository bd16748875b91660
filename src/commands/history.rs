//! `linkperf history`: each point's metric over the stored runs, in a chosen order, with the
//! change points PELT finds (see `trend` and `changepoint`), so a slow drift shows even when
//! every step is under the gate's threshold. `--fail-on-change` exits 1 when the latest step of
//! a series is a regression beyond the gate's threshold.

use crate::cli::HistoryArgs;
use crate::config::Config;
use crate::exit::ExitStatus;
use crate::format;
use crate::trend::{self, Series, Step};
use anyhow::{bail, Result};
use serde::Serialize;
use std::io::Write;
use std::path::Path;

#[derive(Serialize)]
struct Judged<'a> {
    #[serde(flatten)]
    series: &'a Series,
    /// The latest change point, judged like a gate decision.
    latest_step: Option<Step>,
}

pub fn run(store_dir: &Path, config: &Config, args: &HistoryArgs) -> Result<ExitStatus> {
    let pair_by = crate::gate::pair_by(&args.pairing.pair_by, trend::PAIR_KEYS)?;
    let selected = crate::selection::load(store_dir, config, &args.selection.filters)?;
    if selected.is_empty() {
        bail!(
            "the selection is empty: no stored run matches {:?}",
            args.selection.filters
        );
    }
    let all = trend::series(
        &selected,
        &trend::Options {
            order_by: &args.order_by,
            metric: args.metric.map(|m| m.as_str()),
            pair_by: &pair_by,
            min_change: args.min_change,
        },
    )?;
    let out: Vec<Judged> = all
        .iter()
        .filter(|s| args.all || !s.change_points.is_empty())
        .map(|s| Judged {
            series: s,
            latest_step: trend::latest_step(s, &config.gate),
        })
        .collect();
    let regressions: Vec<&Judged> = out
        .iter()
        .filter(|j| j.latest_step.as_ref().is_some_and(|s| s.regression))
        .collect();
    let failed = args.fail_on_change && !regressions.is_empty();
    let status = if failed {
        ExitStatus::Regression
    } else {
        ExitStatus::Success
    };
    let mut stdout = std::io::stdout().lock();
    if args.format == crate::cli::TextOrJson::Json {
        writeln!(stdout, "{}", serde_json::to_string_pretty(&out)?)?;
        return Ok(status);
    }
    let axis = args
        .order_by
        .strip_prefix("label:")
        .unwrap_or(&args.order_by);
    for j in &out {
        let s = j.series;
        let k = &s.key;
        writeln!(
            stdout,
            "{} {} {} {} B {} ({} runs): {}",
            s.platform,
            k.test,
            k.role,
            k.msg_size_bytes.map_or("-".into(), |v| v.to_string()),
            k.metric,
            s.values.len(),
            s.values
                .iter()
                .map(|v| format::num(v.1))
                .collect::<Vec<_>>()
                .join(" ")
        )?;
        for c in &s.change_points {
            writeln!(
                stdout,
                "  change point before run {} ({axis}={}, {}): {} → {} ({:+.1} %)",
                c.index + 1,
                s.values[c.index].0,
                s.values[c.index].2,
                format::num(c.mean_before),
                format::num(c.mean_after),
                c.relative_change * 100.0
            )?;
        }
    }
    if out.is_empty() {
        writeln!(
            stdout,
            "no change points found (use --all to list every series)"
        )?;
    }
    if args.fail_on_change {
        for j in &regressions {
            let step = j.latest_step.as_ref().expect("a regression has a step");
            writeln!(
                stdout,
                "regression: {}: step at {axis}={} ({}): {} → {} ({:+.1} %, beyond the {:.0} % threshold){}",
                trend::describe(j.series),
                step.order,
                step.source,
                format::num(step.mean_before),
                format::num(step.mean_after),
                step.relative_change * 100.0,
                step.threshold * 100.0,
                if step.config_changes.is_empty() {
                    String::new()
                } else {
                    format!("; config: {}", step.config_changes.join(", "))
                }
            )?;
        }
        writeln!(
            stdout,
            "{}",
            if failed {
                format!(
                    "FAILED: the latest step of {} series is a regression",
                    regressions.len()
                )
            } else {
                "passed: no series ends in a regression step".to_string()
            }
        )?;
    }
    Ok(status)
}

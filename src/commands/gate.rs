//! `linkperf gate`: pairs the points of a baseline and a current selection, decides each with
//! [`crate::gate::decide`], reports configuration that changed inside a pair (MTU, TX depth,
//! inline size, firmware, driver), and exits 1 when anything regressed (or went missing).
//! Outputs: a table worst first, `--json`, `--junit`, `--markdown`, the GitHub job summary
//! and `::error` annotations.

use crate::cli::GateArgs;
use crate::config::Config;
use crate::exit::ExitStatus;
use crate::format;
use crate::gate::{self, evaluate, GateResult, Outcome};
use crate::selection::Selection;
use anyhow::{bail, Context, Result};
use std::io::Write;
use std::path::Path;

fn write_file(path: &Path, text: &str) -> Result<()> {
    super::shared::write_atomic(path, text.as_bytes())
}

pub fn run(store_dir: &Path, config: &Config, args: &GateArgs) -> Result<ExitStatus> {
    let metric_names: Vec<String> = args.metrics.iter().map(|m| m.to_string()).collect();
    let pair_by = gate::pair_by(&args.pairing.pair_by, gate::PAIR_KEYS)?;
    let side = |path: Option<&Path>, own: &[String], what: &str| -> Result<Selection> {
        let filters: Vec<String> = args.selection.filters.iter().chain(own).cloned().collect();
        let metrics: Vec<&str> = args.metrics.iter().map(|m| m.as_str()).collect();
        let runs = crate::selection::load_source(path, store_dir, config, &filters, &metrics)
            .with_context(|| format!("cannot read the {what}"))?;
        if runs.rows.height() == 0 {
            bail!("the {what} selection is empty: no run with measurements matches {filters:?}");
        }
        Ok(runs)
    };
    let baseline = side(args.baseline.as_deref(), &args.baseline_where, "baseline")?;
    let current = side(args.current.as_deref(), &args.current_where, "current")?;
    let points = evaluate(&baseline, &current, &metric_names, &pair_by, &config.gate)?;
    if points.is_empty() {
        bail!("no comparable points in the baseline and current selections");
    }
    let missing_fails = config.gate.missing == crate::config::Missing::Fail;
    let failed = points.iter().any(|p| {
        p.decision.outcome == Outcome::Regressed
            || (missing_fails && p.decision.outcome == Outcome::Missing)
    });

    let (h, r) = gate::table::table_rows(&points);
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(format::text_table(&h, &r).as_bytes())?;
    writeln!(stdout, "{}", gate::table::summary(&points, failed))?;
    let result = GateResult { failed, points };
    let points = &result.points;
    if let Some(path) = &args.json {
        write_file(path, &(serde_json::to_string_pretty(&result)? + "\n"))?;
    }
    if let Some(path) = &args.junit {
        write_file(path, &gate::junit::junit(points))?;
    }
    if let Some(path) = &args.markdown {
        write_file(path, &gate::markdown::markdown(points, failed, false))?;
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
        f.write_all(gate::markdown::markdown(points, failed, true).as_bytes())?;
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
                gate::table::num(p.decision.baseline_median),
                gate::table::num(p.decision.current_median),
                p.decision.reason
            )?;
        }
    }
    super::free_at_exit((baseline, current, result));
    Ok(if failed {
        ExitStatus::Regression
    } else {
        ExitStatus::Success
    })
}

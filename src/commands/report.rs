//! `linkperf report`: selection → view model → templates → files.

use crate::cli::ReportArgs;
use crate::config::Config;
use crate::report::{self, model};
use crate::exit::ExitStatus;
use anyhow::{bail, Context, Result};
use std::path::Path;

pub fn run(store_dir: &Path, config: &Config, args: &ReportArgs) -> Result<ExitStatus> {
    let formats: Vec<&str> = args
        .format
        .split(',')
        .map(str::trim)
        .filter(|f| !f.is_empty())
        .collect();
    if let Some(bad) = formats.iter().find(|f| !matches!(**f, "html" | "md")) {
        bail!("--format {bad:?}: choose from html, md");
    }
    // Templates first: a broken template is reported before any work.
    let env = report::environment(args.templates.as_deref())?;
    let selected = super::selection::load(store_dir, config, &args.filters)?;
    if selected.iter().all(|(r, _)| r.measurements.is_empty()) {
        bail!(
            "the selection is empty: no stored run with measurements matches {:?}",
            args.filters
        );
    }
    let gate = match &args.gate {
        Some(p) => Some(
            serde_json::from_str(
                &std::fs::read_to_string(p)
                    .with_context(|| format!("cannot read {}", p.display()))?,
            )
            .with_context(|| format!("{}: not a linkperf gate JSON file", p.display()))?,
        ),
        None => None,
    };
    let ctx = model::build(
        &selected,
        config,
        &model::Options {
            title: &args.title,
            by: &args.by,
            baseline: args.baseline.as_deref(),
            filters: &args.filters,
            gate,
            history_by: &args.history_by,
        },
    )?;
    let files = report::write(
        &args.output,
        &ctx,
        &env,
        args.templates.as_deref(),
        &report::Outputs {
            html: formats.contains(&"html"),
            markdown: formats.contains(&"md"),
            dump_context: args.dump_context,
        },
    )?;
    for f in &files {
        if f.extension().is_some_and(|e| e == "html" || e == "md") {
            println!("{}", f.display());
        }
    }
    Ok(ExitStatus::Success)
}

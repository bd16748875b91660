//! `linkperf report`: selection → view model → templates → files.

use crate::cli::ReportArgs;
use crate::config::Config;
use crate::exit::ExitStatus;
use crate::report::generate::{generate, Request};
use anyhow::Result;
use std::path::Path;

pub fn run(store_dir: &Path, config: &Config, args: &ReportArgs) -> Result<ExitStatus> {
    let files = generate(
        store_dir,
        config,
        &Request {
            output: &args.output,
            filters: &args.selection.filters,
            by: &args.by,
            baseline: args.baseline.as_deref(),
            formats: &args.format,
            title: &args.title,
            templates: args.templates.as_deref(),
            dump_context: args.dump_context,
            gate: args.gate.as_deref(),
            history_by: &args.history_by,
        },
    )?;
    for f in &files {
        if f.extension().is_some_and(|e| e == "html" || e == "md") {
            outln!("{}", f.display())?;
        }
    }
    Ok(ExitStatus::Success)
}

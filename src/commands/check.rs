//! `linkperf check`: the findings of [`crate::check`] over the selected runs, one line each
//! (`source:line: rule: test message`) or as JSON.

use crate::check::{self, RULES};
use crate::cli::{CheckArgs, CheckFormat};
use crate::config::Config;
use crate::exit::ExitStatus;
use anyhow::Result;
use std::io::Write;
use std::path::Path;

pub fn run(store_dir: &Path, config: &Config, args: &CheckArgs) -> Result<ExitStatus> {
    let mut out = std::io::stdout().lock();
    if args.rules {
        for (rule, meaning) in RULES {
            writeln!(out, "{rule:<20} {meaning}")?;
        }
        return Ok(ExitStatus::Success);
    }
    let selected = crate::selection::load(store_dir, config, &args.selection.filters)?;
    let findings = check::check(&selected, config);
    match args.format {
        CheckFormat::Json => writeln!(out, "{}", serde_json::to_string_pretty(&findings)?)?,
        CheckFormat::Table => {
            for f in &findings {
                writeln!(out, "{f}")?;
            }
            eprintln!(
                "linkperf: {} finding(s) over {} run(s)",
                findings.len(),
                selected.len()
            );
        }
    }
    Ok(if args.fail_on_findings && !findings.is_empty() {
        ExitStatus::Regression
    } else {
        ExitStatus::Success
    })
}

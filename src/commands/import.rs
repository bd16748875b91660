//! `linkperf import`: read files and directories, parse, attach labels, store atomically, and
//! print a summary that lists every line or block that could not be read.

use crate::cli::ImportArgs;
use crate::exit::ExitStatus;
use crate::pipeline::{self, Mode};
use anyhow::{bail, Result};
use std::fmt::Write;
use std::path::Path;

pub fn run(
    store_dir: &Path,
    config: Result<crate::config::Config>,
    args: &ImportArgs,
) -> Result<ExitStatus> {
    let labels = super::shared::parse_labels(&args.labels)?;
    // Only for findings: a broken project file must not block an import.
    let config = config.unwrap_or_default();
    let inputs = pipeline::collect_inputs(&args.paths)?;
    // --strict and --dry-run decide before anything is written.
    let mode = match (args.dry_run, args.strict) {
        (true, _) => Mode::DryRun,
        (false, true) => Mode::Strict,
        (false, false) => Mode::Store,
    };
    let imported = pipeline::import(
        store_dir,
        &inputs.files,
        &pipeline::Options {
            labels: &labels,
            mode,
            jobs: args.jobs,
            check: Some(&config),
            file_labels: None,
            stream: Default::default(),
            listed_dirs: Some(&inputs.listed),
            before_commit: None,
        },
    )?;
    let problems = &imported.problems;
    if args.strict && !problems.is_empty() {
        for p in problems {
            eprintln!("linkperf: {p}");
        }
        bail!(
            "--strict: {} problem(s) in the input; nothing was stored",
            problems.len()
        );
    }
    let summary = format!(
        "read {} file(s), {:.1} MB: {} run(s), {} row(s)",
        imported.files,
        imported.bytes as f64 / 1e6,
        imported.runs,
        imported.rows
    );
    match imported.stored {
        None => outln!("{summary}; --dry-run: nothing stored")?,
        Some(outcome) => outln!(
            "{summary}; stored {} new run(s) ({} rows), {} already in {}",
            outcome.added_runs,
            outcome.added_rows,
            outcome.already_stored,
            store_dir.display()
        )?,
    }
    // One write for every list below: a line each cost a system call per file when many
    // files have something to say.
    let mut out = String::new();
    if !imported.failed.is_empty() {
        writeln!(
            out,
            "{} run(s) failed (stored with their error):",
            imported.failed.len()
        )?;
        for f in &imported.failed {
            writeln!(out, "  {f}")?;
        }
    }
    if !imported.findings.is_empty() {
        writeln!(
            out,
            "{} finding(s) (values stored as read; `linkperf check` lists them again):",
            imported.findings.len()
        )?;
        for f in &imported.findings {
            writeln!(out, "  {f}")?;
        }
    }
    if !imported.nothing.is_empty() {
        writeln!(out, "{} file(s) yielded no run:", imported.nothing.len())?;
        for (file, why) in &imported.nothing {
            writeln!(out, "  {file}: {}", why.as_str())?;
        }
    }
    if imported.unreadable_blocks > 0 || !problems.is_empty() {
        writeln!(
            out,
            "{} unreadable block(s); {} problem(s):",
            imported.unreadable_blocks,
            problems.len()
        )?;
        for p in problems {
            writeln!(out, "  {p}")?;
        }
    }
    out!("{out}")?;
    Ok(ExitStatus::Success)
}

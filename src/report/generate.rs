//! One call from a selection to a written report, used by `linkperf report` and `linkperf run`.

use super::{environment, model, write, Outputs};
use crate::config::Config;
use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};

/// A file format of the report directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// `index.html`: one self-contained page.
    Html,
    /// `report.md` and `summary.md`, with the charts as SVG files beside them.
    Md,
}

/// What to report and where.
pub struct Request<'a> {
    pub output: &'a Path,
    pub filters: &'a [String],
    pub by: &'a str,
    pub baseline: Option<&'a str>,
    pub formats: &'a [Format],
    pub title: &'a str,
    pub templates: Option<&'a Path>,
    pub dump_context: bool,
    /// A `linkperf gate --json` file whose regressions get a section.
    pub gate: Option<&'a Path>,
    pub history_by: &'a str,
}

/// Selects the runs, builds the view model, renders and writes the report directory
/// atomically. Returns the files written.
pub fn generate(store_dir: &Path, config: &Config, req: &Request) -> Result<Vec<PathBuf>> {
    // Templates first: a broken template is reported before any work.
    let env = environment(req.templates)?;
    let selected = crate::selection::load(store_dir, config, req.filters)?;
    if selected.iter().all(|(r, _)| r.measurements.is_empty()) {
        bail!(
            "the selection is empty: no stored run with measurements matches {:?}",
            req.filters
        );
    }
    let gate = match req.gate {
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
            title: req.title,
            by: req.by,
            baseline: req.baseline,
            filters: req.filters,
            gate,
            history_by: req.history_by,
        },
    )?;
    write(
        req.output,
        &ctx,
        &env,
        req.templates,
        &Outputs {
            html: req.formats.contains(&Format::Html),
            markdown: req.formats.contains(&Format::Md),
            dump_context: req.dump_context,
        },
    )
}

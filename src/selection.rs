//! What every read command (and the report) starts with: open the store, resolve each run's
//! platform with the project file, and apply the `--where` filter; or read a baseline given as
//! raw logs or an export file.

use crate::config::Config;
use crate::export::Filter;
use crate::model::Run;
use crate::normalize::platform::{self, Platform};
use crate::normalize::points;
use crate::store::{query::Snapshot, Store};
use anyhow::Result;
use polars::prelude::{DataFrame, Expr};
use std::collections::BTreeSet;
use std::path::Path;

/// A selection in columnar form: the runs with their platforms, their measurements left out,
/// and one frame of the measurement columns the point pipeline reads ([`points::values`]),
/// whose `run` column indexes `runs`.
pub struct Selection {
    pub runs: Vec<(Run, Platform)>,
    pub rows: DataFrame,
}

impl Selection {
    /// The columnar form of runs already in memory.
    pub fn from_runs(mut runs: Vec<(Run, Platform)>) -> Result<Selection> {
        let rows = points::rows_frame(&runs)?;
        for (r, _) in &mut runs {
            r.measurements = Vec::new();
        }
        Ok(Selection { runs, rows })
    }
}

/// Keys a project rule sets, and those resolution derives, can hold for runs without the label.
fn config_keys(config: &Config) -> BTreeSet<&str> {
    config
        .rules
        .iter()
        .flat_map(|r| r.set.keys().map(String::as_str))
        .collect()
}

/// The predicate to push down for `filters` on what `snapshot` stores, and the exact filter to
/// apply after platform resolution.
fn plan(
    snapshot: &Snapshot,
    config_keys: &BTreeSet<&str>,
    filters: &[String],
) -> Result<(Option<Expr>, Filter)> {
    let derived =
        |k: &str| platform::PLATFORM_KEYS.contains(&k) || k == "mtu" || config_keys.contains(k);
    let labels = snapshot.label_keys();
    let mut keys: Vec<&str> = labels
        .iter()
        .map(String::as_str)
        .chain(config_keys.iter().copied())
        .collect();
    keys.sort();
    keys.dedup();
    let filter = Filter::parse_known(filters, &keys)?;
    Ok((filter.pushdown(&labels, &derived), filter))
}

/// Loads the runs of the store that match `filters`, each with its resolved platform. The
/// filter is pushed down to the Parquet scan, so only the selected runs (and a few that a
/// project rule might relabel) are read.
pub fn load(store_dir: &Path, config: &Config, filters: &[String]) -> Result<Vec<(Run, Platform)>> {
    let store = Store::open(store_dir, false)?;
    let keys = config_keys(config);
    let (runs, filter) = store.select_with(|snapshot| plan(snapshot, &keys, filters))?;
    Ok(runs
        .into_iter()
        .map(|r| {
            let p = platform::resolve(&r, config);
            (r, p)
        })
        .filter(|(r, p)| filter.matches(r, p))
        .collect())
}

/// Like [`load`], in columnar form: only the measurement columns the point pipeline needs for
/// `metrics` (none: the headline metrics) are read, and only for the runs the filter keeps.
pub fn load_rows(
    store_dir: &Path,
    config: &Config,
    filters: &[String],
    metrics: &[&str],
) -> Result<Selection> {
    let store = Store::open(store_dir, false)?;
    let keys = config_keys(config);
    let selected = store.select_rows_with(
        |snapshot| plan(snapshot, &keys, filters),
        |run, filter| {
            let p = platform::resolve(run, config);
            filter.matches(run, &p).then_some(p)
        },
        &points::input_columns(metrics),
    )?;
    Ok(Selection {
        runs: selected.runs,
        rows: selected.rows,
    })
}

/// Loads one side of a gate: the store (when `path` is None or a store directory), a
/// `linkperf export` file, or raw logs parsed on the fly. Then resolves platforms and filters.
pub fn load_source(
    path: Option<&Path>,
    store_dir: &Path,
    config: &Config,
    filters: &[String],
    metrics: &[&str],
) -> Result<Selection> {
    let Some(path) = path else {
        return load_rows(store_dir, config, filters, metrics);
    };
    if !path.exists() {
        anyhow::bail!("{}: no such file or directory", path.display());
    }
    if path.join("linkperf-store.json").exists() {
        return load_rows(path, config, filters, metrics);
    }
    let is_export = path.is_file()
        && matches!(
            path.extension().and_then(|e| e.to_str()),
            Some("jsonl" | "ndjson" | "csv" | "parquet")
        );
    let runs = if is_export {
        crate::export::read(path)?
    } else {
        let mut runs = Vec::new();
        for f in crate::pipeline::collect_files(&[path.to_path_buf()])? {
            if crate::counters::is_sidecar(&f) {
                continue; // read with its log
            }
            let bytes = std::fs::read(&f).map_err(|e| anyhow::anyhow!("{}: {e}", f.display()))?;
            let source = f.display().to_string();
            let mut parsed = crate::ingest::parse_bytes(&source, &bytes);
            crate::pipeline::read_counters(&source, &mut parsed.runs);
            runs.extend(parsed.runs);
        }
        runs
    };
    let runs: Vec<(Run, Platform)> = runs
        .into_iter()
        .map(|r| {
            let p = platform::resolve(&r, config);
            (r, p)
        })
        .collect();
    let filter = Filter::parse(filters, &runs)?;
    Selection::from_runs(
        runs.into_iter()
            .filter(|(r, p)| filter.matches(r, p))
            .collect(),
    )
}

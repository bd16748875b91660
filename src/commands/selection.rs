//! What every read verb starts with: open the store, load the project file, resolve each run's
//! platform and apply the `--where` filter.

use crate::config::Config;
use crate::export::Filter;
use crate::model::Run;
use crate::normalize::platform::{self, Platform};
use crate::store::Store;
use anyhow::Result;
use std::collections::BTreeSet;
use std::path::Path;

/// Loads the runs of the store that match `filters`, each with its resolved platform. The
/// filter is pushed down to the Parquet scan, so only the selected runs (and a few that a
/// project rule might relabel) are read.
pub fn load(store_dir: &Path, config: &Config, filters: &[String]) -> Result<Vec<(Run, Platform)>> {
    let store = Store::open(store_dir, false)?;
    // Keys a project rule sets, and those resolution derives, can hold for runs without the label.
    let config_keys: BTreeSet<&str> = config
        .rules
        .iter()
        .flat_map(|r| r.set.keys().map(String::as_str))
        .collect();
    let derived =
        |k: &str| platform::PLATFORM_KEYS.contains(&k) || k == "mtu" || config_keys.contains(k);
    let (runs, filter) = store.select_with(|snapshot| {
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
    })?;
    Ok(runs
        .into_iter()
        .map(|r| {
            let p = platform::resolve(&r, config);
            (r, p)
        })
        .filter(|(r, p)| filter.matches(r, p))
        .collect())
}

/// Loads one side of a gate: the store (when `path` is None or a store directory), a
/// `linkperf export` file, or raw logs parsed on the fly. Then resolves platforms and filters.
pub fn load_source(
    path: Option<&Path>,
    store_dir: &Path,
    config: &Config,
    filters: &[String],
) -> Result<Vec<(Run, Platform)>> {
    let Some(path) = path else {
        return load(store_dir, config, filters);
    };
    if !path.exists() {
        anyhow::bail!("{}: no such file or directory", path.display());
    }
    if path.join("linkperf-store.json").exists() {
        return load(path, config, filters);
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
        for f in super::import::collect_files(&[path.to_path_buf()])? {
            let bytes = std::fs::read(&f).map_err(|e| anyhow::anyhow!("{}: {e}", f.display()))?;
            runs.extend(crate::ingest::parse_bytes(&f.display().to_string(), &bytes).runs);
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
    Ok(runs
        .into_iter()
        .filter(|(r, p)| filter.matches(r, p))
        .collect())
}

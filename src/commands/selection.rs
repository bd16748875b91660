//! What every read verb starts with: open the store, load the project file, resolve each run's
//! platform and apply the `--where` filter.

use crate::config::Config;
use crate::export::Filter;
use crate::model::Run;
use crate::normalize::platform::{self, Platform};
use crate::store::Store;
use anyhow::Result;
use std::path::Path;

/// Loads the runs of the store that match `filters`, each with its resolved platform.
pub fn load(store_dir: &Path, config: &Config, filters: &[String]) -> Result<Vec<(Run, Platform)>> {
    let store = Store::open(store_dir, false)?;
    let runs: Vec<(Run, Platform)> = store
        .load()?
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

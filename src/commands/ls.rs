//! `linkperf ls`: one line per stored run.

use crate::cli::LsArgs;
use crate::export::Filter;
use crate::store::Store;
use crate::ExitStatus;
use anyhow::Result;
use std::io::Write;
use std::path::Path;

pub fn run(store_dir: &Path, args: &LsArgs) -> Result<ExitStatus> {
    let store = Store::open(store_dir, false)?;
    let runs = store.load()?;
    let filter = Filter::parse(&args.filters, &runs)?;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{:<8} {:<16} {:<7} {:<11} {:<10} {:>5} {:>5}  {:<40} labels",
        "tool", "test", "role", "status", "device", "mtu", "rows", "source:line"
    )?;
    let mut n = 0;
    for r in runs.iter().filter(|r| filter.matches(r)) {
        n += 1;
        let labels = r
            .labels
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(",");
        writeln!(
            out,
            "{:<8} {:<16} {:<7} {:<11} {:<10} {:>5} {:>5}  {:<40} {}",
            r.tool,
            r.test,
            r.role.as_str(),
            r.status.as_str(),
            r.device.as_deref().unwrap_or("-"),
            r.mtu.map_or("-".to_string(), |m| m.to_string()),
            r.measurements.len(),
            format!("{}:{}", r.source, r.line),
            labels
        )?;
    }
    if n == 0 {
        eprintln!("linkperf: no run matches the selection");
    }
    Ok(ExitStatus::Success)
}

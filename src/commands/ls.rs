//! `linkperf ls`: one line per stored run.

use crate::cli::LsArgs;
use crate::config::Config;
use crate::exit::ExitStatus;
use anyhow::Result;
use std::io::Write;
use std::path::Path;

pub fn run(store_dir: &Path, config: &Config, args: &LsArgs) -> Result<ExitStatus> {
    let runs = crate::selection::load(store_dir, config, &args.selection.filters)?;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{:<8} {:<16} {:<7} {:<11} {:<10} {:>5} {:>5}  {:<40} platform (source)",
        "tool", "test", "role", "status", "device", "mtu", "rows", "source:line"
    )?;
    let mut n = 0;
    for (r, p) in &runs {
        n += 1;
        // The resolved platform, each value with its source: label, config, device facts, built-in.
        let labels = crate::normalize::platform::describe(p);
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

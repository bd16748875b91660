//! `linkperf fleet`: per-host effects fitted to the pair results of pattern tests (see
//! [`crate::fleet`]), per test and message size; exit 1 when a host or pair is a suspect.

use crate::cli::{FleetArgs, FleetFormat};
use crate::config::Config;
use crate::exit::ExitStatus;
use crate::fleet::{groups, Group};
use anyhow::{bail, Result};
use std::io::Write;
use std::path::Path;

fn title(g: &Group) -> String {
    format!(
        "{}{} {}: {} pairs, {} hosts, fleet median {}, noise {:.1} %",
        g.test,
        g.msg_size_bytes.map_or(String::new(), |s| format!(" {s} B")),
        g.metric,
        g.fit.cells.len(),
        g.fit.hosts.len(),
        crate::format::num(g.fit.median),
        g.fit.noise * 100.0
    )
}

fn suspect_lines(g: &Group) -> Vec<String> {
    g.fit.suspects.iter().map(|s| s.describe()).collect()
}

pub fn run(store_dir: &Path, config: &Config, args: &FleetArgs) -> Result<ExitStatus> {
    if !(args.threshold > 0.0 && args.threshold < 1.0) {
        bail!("--threshold {}: give a share between 0 and 1 (0.1 = 10 % below the fleet)", args.threshold);
    }
    let selected = crate::selection::load(store_dir, config, &args.selection.filters)?;
    let groups = groups(&selected, &args.metric, args.threshold)?;
    let mut out = std::io::stdout().lock();
    match args.format {
        FleetFormat::Json => writeln!(out, "{}", serde_json::to_string_pretty(&groups)?)?,
        FleetFormat::Table => {
            for g in &groups {
                writeln!(out, "{}", title(g))?;
                for l in suspect_lines(g) {
                    writeln!(out, "  {l}")?;
                }
                let hosts: Vec<String> = g
                    .fit
                    .hosts
                    .iter()
                    .map(|h| format!("{} {:.2}", h.host, h.ratio))
                    .collect();
                writeln!(out, "  host effects: {}", hosts.join(", "))?;
            }
        }
        FleetFormat::Markdown => {
            for g in &groups {
                writeln!(out, "### {}\n", title(g))?;
                for l in suspect_lines(g) {
                    writeln!(out, "- {l}")?;
                }
                writeln!(out, "\n| host | effect | pairs |\n|---|---|---|")?;
                for h in &g.fit.hosts {
                    writeln!(out, "| {} | {:.2} | {} |", h.host, h.ratio, h.pairs)?;
                }
                writeln!(out)?;
            }
        }
    }
    if groups.is_empty() {
        eprintln!(
            "linkperf: no pair results in the selection (runs of pattern tests carry server_host and client_host labels)"
        );
    }
    let suspects: usize = groups.iter().map(|g| g.fit.suspects.len()).sum();
    Ok(if suspects > 0 {
        ExitStatus::Regression
    } else {
        ExitStatus::Success
    })
}

//! linkperf: reads the output of RDMA and TCP benchmark tools (perftest, iperf, qperf, ibping)
//! as people keep it, normalizes every number to canonical units with its provenance, stores
//! the results in a Parquet store and exports them.
//!
//! Data flows in one direction: `ingest` (bytes → runs) → `store` (runs ↔ Parquet) →
//! `export` (runs → rows). `commands` wires the verbs of the CLI to that flow.

pub mod changepoint;
pub mod cli;
pub mod columns;
pub mod commands;
pub mod compare;
pub mod config;
pub mod export;
pub mod format;
pub mod gate;
pub mod ingest;
pub mod model;
pub mod normalize;
pub mod report;
pub mod runner;
pub mod stats;
pub mod store;
pub mod trend;
pub mod units;
pub mod verbs;

use std::process::ExitCode;

/// How a verb ended; mapped to the process exit code in one place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// Exit 0.
    Success,
    /// Exit 1: reserved for "regression found" (gate).
    Regression,
    /// Exit 2: usage or input error.
    Error,
}

impl From<ExitStatus> for ExitCode {
    fn from(s: ExitStatus) -> ExitCode {
        ExitCode::from(match s {
            ExitStatus::Success => 0,
            ExitStatus::Regression => 1,
            ExitStatus::Error => 2,
        })
    }
}

/// Runs the parsed command line.
pub fn run(cli: cli::Cli) -> anyhow::Result<ExitStatus> {
    // Completions read no project file: a broken `linkperf.toml` must not block them.
    if let cli::Command::Completions { shell } = cli.command {
        return commands::completions::run(shell);
    }
    let config = match &cli.config {
        Some(path) => config::Config::load(path, true)?,
        None => config::Config::load(std::path::Path::new("linkperf.toml"), false)?,
    };
    match cli.command {
        cli::Command::Import(args) => commands::import::run(&cli.store, &args),
        cli::Command::Export(args) => commands::export::run(&cli.store, &config, &args),
        cli::Command::Ls(args) => commands::ls::run(&cli.store, &config, &args),
        cli::Command::Compare(args) => commands::compare::run(&cli.store, &config, &args),
        cli::Command::Gate(args) => commands::gate::run(&cli.store, &config, &args),
        cli::Command::History(args) => commands::history::run(&cli.store, &config, &args),
        cli::Command::Report(args) => commands::report::run(&cli.store, &config, &args),
        cli::Command::Run(args) => commands::run::run(&cli.store, &config, &args),
        cli::Command::Devices(args) => commands::devices::run(&args),
        cli::Command::Bench(args) => commands::bench::run(&cli.store, &args),
        cli::Command::Store(cmd) => commands::store::run(&cli.store, &cmd),
        cli::Command::Completions { shell } => commands::completions::run(shell),
    }
}

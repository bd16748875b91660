//! Command-line interface (clap derive). Each verb's arguments live here; the work is in
//! `commands/<verb>.rs`.

use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "linkperf",
    version,
    about = "Import, compare and report RDMA and TCP benchmark logs"
)]
pub struct Cli {
    /// Results store directory.
    #[arg(
        long,
        global = true,
        env = "LINKPERF_STORE",
        default_value = "linkperf-store"
    )]
    pub store: PathBuf,
    /// Project file with labelling rules (default: ./linkperf.toml when it exists).
    #[arg(long, global = true, env = "LINKPERF_CONFIG")]
    pub config: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Import raw logs (files or directories, recursively) into the store.
    Import(ImportArgs),
    /// Write one row per measurement point as JSON Lines, CSV or Parquet.
    Export(ExportArgs),
    /// List stored runs, one line each.
    Ls(LsArgs),
    /// Compare groups (platforms, MTUs, label values) point by point against a baseline.
    Compare(CompareArgs),
    /// Fail (exit 1) when the current results regressed against a baseline.
    Gate(GateArgs),
    /// A metric over the stored history of each point, with detected change points.
    History(HistoryArgs),
    /// Write an HTML and Markdown report with charts.
    Report(ReportArgs),
    /// Run a suite of benchmarks between hosts, keep the raw logs, import them and report.
    Run(RunArgs),
}

#[derive(Debug, clap::Args)]
pub struct ImportArgs {
    /// Files or directories to import.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Attach a label to every run of this import (repeatable), e.g. platform=kunpeng920.
    #[arg(long = "label", value_name = "KEY=VALUE")]
    pub labels: Vec<String>,
    /// Treat any unreadable line or block as an error (exit 2, nothing stored).
    #[arg(long)]
    pub strict: bool,
    /// Parse and report, but store nothing.
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ExportFormat {
    Jsonl,
    Csv,
    Parquet,
}

#[derive(Debug, clap::Args)]
pub struct ExportArgs {
    #[arg(long, value_enum, default_value = "jsonl")]
    pub format: ExportFormat,
    /// Keep only runs where KEY=VALUE (repeatable, or comma-separated); keys are run columns or labels.
    #[arg(long = "where", value_name = "KEY=VALUE")]
    pub filters: Vec<String>,
    /// Output file (default: standard output; required for Parquet).
    #[arg(short, long)]
    pub output: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub struct LsArgs {
    #[arg(long = "where", value_name = "KEY=VALUE")]
    pub filters: Vec<String>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum CompareFormat {
    Table,
    Markdown,
    Json,
    Csv,
}

#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    /// Dimension to compare: platform, mtu, cpu, nic, driver, firmware, host, device, qps,
    /// connection_type, role, or label:NAME.
    #[arg(long, default_value = "platform")]
    pub by: String,
    /// Group the others are compared with (default: the first in sort order).
    #[arg(long)]
    pub baseline: Option<String>,
    /// Metric to compare (default: bandwidth for bandwidth tests, typical latency for latency tests).
    #[arg(long)]
    pub metric: Option<String>,
    #[arg(long = "where", value_name = "KEY=VALUE")]
    pub filters: Vec<String>,
    #[arg(long, value_enum, default_value = "table")]
    pub format: CompareFormat,
    /// Relative difference that still counts as the same (0.01 = 1 %).
    #[arg(long, default_value_t = 0.01)]
    pub same_within: f64,
}

#[derive(Debug, clap::Args)]
pub struct GateArgs {
    /// Baseline: a store directory, a file or directory of raw logs, or a `linkperf export`
    /// file (.jsonl, .csv, .parquet). Default: the --store.
    #[arg(long)]
    pub baseline: Option<PathBuf>,
    /// Current results, in any of the baseline's forms. Default: the --store.
    #[arg(long)]
    pub current: Option<PathBuf>,
    /// Filter for the baseline only (KEY=VALUE, repeatable).
    #[arg(long = "baseline-where", value_name = "KEY=VALUE")]
    pub baseline_where: Vec<String>,
    /// Filter for the current results only.
    #[arg(long = "current-where", value_name = "KEY=VALUE")]
    pub current_where: Vec<String>,
    /// Filter for both sides.
    #[arg(long = "where", value_name = "KEY=VALUE")]
    pub filters: Vec<String>,
    /// Metrics to gate (repeatable). Default: bandwidth for bandwidth tests, typical latency
    /// for latency tests.
    #[arg(long = "metric")]
    pub metrics: Vec<String>,
    /// Keys that pair points (comma-separated) from: test, role, connection_type, qps,
    /// msg_size, platform, mtu, host, device.
    #[arg(
        long,
        default_value = "test,role,connection_type,qps,msg_size,platform"
    )]
    pub pair_by: String,
    /// Write the decisions as JSON.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Write a JUnit XML report (one test case per test and size).
    #[arg(long)]
    pub junit: Option<PathBuf>,
    /// Write a Markdown report.
    #[arg(long)]
    pub markdown: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub struct HistoryArgs {
    #[arg(long = "where", value_name = "KEY=VALUE")]
    pub filters: Vec<String>,
    /// Metric (default: bandwidth for bandwidth tests, typical latency for latency tests).
    #[arg(long)]
    pub metric: Option<String>,
    /// Order of the history: `source` (path, then line: dated log names sort by date),
    /// `label:NAME`, or `mtu`.
    #[arg(long, default_value = "source")]
    pub order_by: String,
    /// Smallest relative mean shift reported (0.005 = 0.5 %).
    #[arg(long, default_value_t = 0.005)]
    pub min_change: f64,
    /// Print every series, not only those with change points.
    #[arg(long)]
    pub all: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// Output directory (e.g. reports/kp920-vs-b850): index.html, report.md, summary.md, charts/.
    #[arg(short, long)]
    pub output: PathBuf,
    #[arg(long = "where", value_name = "KEY=VALUE")]
    pub filters: Vec<String>,
    /// Dimension of the comparison: platform, mtu, label:NAME, ...
    #[arg(long, default_value = "platform")]
    pub by: String,
    #[arg(long)]
    pub baseline: Option<String>,
    /// Formats to write, comma-separated: html, md.
    #[arg(long, default_value = "html,md")]
    pub format: String,
    /// Report title.
    #[arg(long, default_value = "linkperf report")]
    pub title: String,
    /// Directory with templates (report.html, report.md, summary.md) that replace the built-in ones.
    #[arg(long)]
    pub templates: Option<PathBuf>,
    /// Also write the templates' context as context.json.
    #[arg(long)]
    pub dump_context: bool,
    /// A `linkperf gate --json` file: adds a regressions section.
    #[arg(long)]
    pub gate: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// Suite file (TOML; examples under suites/). Or use --tests with --server/--client.
    pub suite: Option<PathBuf>,
    /// Shortcut: comma-separated tools to run (iperf, iperf3, qperf, ib_write_bw, ...).
    #[arg(long)]
    pub tests: Option<String>,
    /// Shortcut: the server's address (local when it is this machine, else reached by ssh).
    #[arg(long, default_value = "127.0.0.1")]
    pub server: String,
    /// Shortcut: the client's address.
    #[arg(long, default_value = "127.0.0.1")]
    pub client: String,
    /// Directory under which the run directory `<timestamp>-<suite>/` is created.
    #[arg(long, default_value = "runs")]
    pub runs_dir: PathBuf,
    /// Label every imported run (repeatable).
    #[arg(long = "label", value_name = "KEY=VALUE")]
    pub labels: Vec<String>,
    /// Print the plan (commands per host) and run nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Import but write no report.
    #[arg(long)]
    pub no_report: bool,
    /// First TCP port for the tests (each test gets its own block of 10).
    #[arg(long, default_value_t = 47000)]
    pub base_port: u16,
}

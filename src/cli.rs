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

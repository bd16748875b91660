//! `linkperf export`: one row per measurement point in the public schema.

use crate::cli::{ExportArgs, ExportFormat};
use crate::config::Config;
use crate::export;
use crate::ExitStatus;
use anyhow::{bail, Context, Result};
use polars::prelude::{CsvWriter, ParquetWriter, SerWriter};
use std::io::Write;
use std::path::Path;

pub fn run(store_dir: &Path, config: &Config, args: &ExportArgs) -> Result<ExitStatus> {
    let selected = super::selection::load(store_dir, config, &args.filters)?;
    if args.samples {
        return write_samples(&export::sample_rows(&selected), args);
    }
    let rows = export::rows(&selected);
    let bytes = match args.format {
        ExportFormat::Jsonl => export::to_jsonl(&rows).into_bytes(),
        ExportFormat::Csv => {
            let mut buf = Vec::new();
            CsvWriter::new(&mut buf).finish(&mut export::to_frame(&rows)?)?;
            buf
        }
        ExportFormat::Parquet => {
            if args.output.is_none() {
                bail!("--format parquet needs --output FILE");
            }
            let mut buf = Vec::new();
            ParquetWriter::new(&mut buf).finish(&mut export::to_frame(&rows)?)?;
            buf
        }
    };
    match &args.output {
        Some(path) => write_atomic(path, &bytes)?,
        None => std::io::stdout().lock().write_all(&bytes)?,
    }
    if rows.is_empty() {
        eprintln!("linkperf: no measurement matches the selection");
    }
    Ok(ExitStatus::Success)
}

/// `--samples`: the per-iteration latency samples of the selected runs.
fn write_samples(rows: &[export::SampleRow], args: &ExportArgs) -> Result<ExitStatus> {
    let bytes = match args.format {
        ExportFormat::Jsonl => export::samples_to_jsonl(rows).into_bytes(),
        ExportFormat::Csv => {
            let mut buf = Vec::new();
            CsvWriter::new(&mut buf).finish(&mut export::samples_to_frame(rows)?)?;
            buf
        }
        ExportFormat::Parquet => {
            if args.output.is_none() {
                bail!("--format parquet needs --output FILE");
            }
            let mut buf = Vec::new();
            ParquetWriter::new(&mut buf).finish(&mut export::samples_to_frame(rows)?)?;
            buf
        }
    };
    match &args.output {
        Some(path) => write_atomic(path, &bytes)?,
        None => std::io::stdout().lock().write_all(&bytes)?,
    }
    if rows.is_empty() {
        eprintln!(
            "linkperf: no latency samples in the selection (only `linkperf bench` keeps them)"
        );
    }
    Ok(ExitStatus::Success)
}

/// Writes a file through a temporary sibling and a rename, so readers never see half a file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = path.with_extension(format!(
        "{}.tmp",
        path.extension().and_then(|e| e.to_str()).unwrap_or("out")
    ));
    std::fs::write(&tmp, bytes).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

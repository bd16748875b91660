//! `linkperf export`: one row per measurement point in the public schema (or per latency
//! sample, or per counter change).

use crate::cli::{ExportArgs, ExportFormat};
use crate::config::Config;
use crate::exit::ExitStatus;
use crate::export;
use anyhow::{bail, Result};
use polars::prelude::{CsvWriter, DataFrame, ParquetWriter, SerWriter};
use serde::Serialize;
use std::io::Write;
use std::path::Path;

pub fn run(store_dir: &Path, config: &Config, args: &ExportArgs) -> Result<ExitStatus> {
    let selected = crate::selection::load(store_dir, config, &args.selection.filters)?;
    let (bytes, empty) = if args.counters {
        let rows = export::counter_rows(&selected);
        (
            encode(&rows, export::counters_to_frame, args)?,
            rows.is_empty(),
        )
    } else if args.samples {
        let rows = export::sample_rows(&selected);
        (
            encode(&rows, export::samples_to_frame, args)?,
            rows.is_empty(),
        )
    } else {
        let rows = export::rows(&selected);
        (encode(&rows, export::to_frame, args)?, rows.is_empty())
    };
    match &args.output {
        Some(path) => super::shared::write_atomic(path, &bytes)?,
        None => std::io::stdout().lock().write_all(&bytes)?,
    }
    if empty {
        eprintln!(
            "linkperf: {}",
            if args.counters {
                "no counter changed in the selection (`linkperf run` and `linkperf bench` read them)"
            } else if args.samples {
                "no latency samples in the selection (`linkperf bench` and perftest -H/-U keep them)"
            } else {
                "no measurement matches the selection"
            }
        );
    }
    Ok(ExitStatus::Success)
}

/// The rows in the requested format: JSON Lines straight from serde, CSV and Parquet through
/// the same typed frame.
fn encode<T: Serialize>(
    rows: &[T],
    to_frame: fn(&[T]) -> Result<DataFrame>,
    args: &ExportArgs,
) -> Result<Vec<u8>> {
    let mut buf = Vec::new();
    match args.format {
        ExportFormat::Jsonl => buf = export::to_jsonl(rows).into_bytes(),
        ExportFormat::Csv => CsvWriter::new(&mut buf).finish(&mut to_frame(rows)?)?,
        ExportFormat::Parquet => {
            if args.output.is_none() {
                bail!("--format parquet needs --output FILE");
            }
            ParquetWriter::new(&mut buf).finish(&mut to_frame(rows)?)?;
        }
    }
    Ok(buf)
}

//! `store info`: what a store holds and how it is laid out, read from directory names and
//! Parquet footers only (no data pages).

use super::frames::SCHEMA_VERSION;
use super::layout;
use super::Store;
use anyhow::{Context, Result};
use polars::prelude::{ParquetReader, SerReader};
use serde::Serialize;
use std::fs;
use std::path::Path;

#[derive(Debug, Default, Serialize)]
pub struct StoreInfo {
    pub schema_version: u32,
    pub runs: usize,
    pub rows: usize,
    pub samples: usize,
    pub partitions: Vec<String>,
    pub batches: usize,
    /// Batches a compaction replaced, not yet removed (removed by the next writer).
    pub superseded_batches: usize,
    pub files: usize,
    pub bytes: u64,
    pub labels: Vec<String>,
}

fn rows_of(path: &Path) -> Result<usize> {
    let f = fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    ParquetReader::new(f)
        .num_rows()
        .map_err(anyhow::Error::from)
        .with_context(|| format!("{}: corrupt Parquet file", path.display()))
}

impl Store {
    pub fn info(&self) -> Result<StoreInfo> {
        let (live, dead) = layout::partition_live(layout::all_batches(self.root())?);
        let mut info = StoreInfo {
            schema_version: SCHEMA_VERSION,
            batches: live.len(),
            superseded_batches: dead.len(),
            ..Default::default()
        };
        for b in &live {
            if !info.partitions.contains(&b.month) {
                info.partitions.push(b.month.clone());
            }
            for e in
                fs::read_dir(&b.dir).with_context(|| format!("cannot list {}", b.dir.display()))?
            {
                let e = e?;
                info.files += 1;
                info.bytes += e.metadata()?.len();
            }
            for c in b.chunks()? {
                info.runs += rows_of(&c.runs)?;
                info.rows += rows_of(&c.points)?;
                if let Some(s) = &c.samples {
                    info.samples += rows_of(s)?;
                }
            }
        }
        info.partitions.sort();
        info.labels = super::query::Snapshot::take(self.root())?
            .label_keys()
            .into_iter()
            .collect();
        Ok(info)
    }
}

impl StoreInfo {
    pub fn to_text(&self, root: &Path) -> String {
        let per_row = if self.rows > 0 {
            format!(
                " ({:.1} bytes per measurement row)",
                self.bytes as f64 / self.rows as f64
            )
        } else {
            String::new()
        };
        format!(
            "store          {}\nschema version {}\nruns           {}\nrows           {}\nsamples        {}\npartitions     {} ({})\nbatches        {}{}\nfiles          {}\nbytes          {}{}\nlabels         {}\n",
            root.display(),
            self.schema_version,
            self.runs,
            self.rows,
            self.samples,
            self.partitions.len(),
            self.partitions
                .iter()
                .map(|m| format!("month={m}"))
                .collect::<Vec<_>>()
                .join(", "),
            self.batches,
            if self.superseded_batches > 0 {
                format!(" (+{} superseded, removed by the next writer)", self.superseded_batches)
            } else {
                String::new()
            },
            self.files,
            self.bytes,
            per_row,
            if self.labels.is_empty() {
                "-".to_string()
            } else {
                self.labels.join(", ")
            },
        )
    }
}

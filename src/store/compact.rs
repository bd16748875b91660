//! `store compact`: merges the batches of each month into one batch of large chunk files, so
//! thousands of small imports cost what a few large ones do. The merged batch is written under
//! `tmp/`, renamed into the month (from then on it supersedes the batches it covers), and the
//! covered batches are removed; a kill at any point leaves every run readable exactly once.

use super::fingerprints;
use super::frames::LABEL_PREFIX;
use super::layout::{self, Batch, SeqRange};
use super::write::{self, read_parquet_columns, write_parquet, write_synced};
use super::Store;
use anyhow::{Context, Result};
use polars::prelude::{Column, DataFrame, DataType, PlSmallStr};
use std::collections::BTreeSet;
use std::fs;

#[derive(Debug, Default, Clone, Copy)]
pub struct CompactOutcome {
    pub months: usize,
    pub batches_merged: usize,
    pub chunks_written: usize,
}

/// Output being accumulated: frames of whole input chunks, flushed as one chunk when full.
#[derive(Default)]
struct Merged {
    runs: Vec<DataFrame>,
    points: Vec<DataFrame>,
    samples: Vec<DataFrame>,
    counters: Vec<DataFrame>,
    range: Option<SeqRange>,
    n_runs: usize,
    n_rows: usize,
}

impl Merged {
    fn full(&self) -> bool {
        self.n_runs >= write::CHUNK_RUNS || self.n_rows >= write::CHUNK_ROWS
    }

    fn flush(&mut self, dir: &std::path::Path) -> Result<usize> {
        let Some(range) = self.range else {
            return Ok(0);
        };
        let cat = |frames: &mut Vec<DataFrame>| -> Result<Option<DataFrame>> {
            let mut it = std::mem::take(frames).into_iter();
            let Some(mut first) = it.next() else {
                return Ok(None);
            };
            for f in it {
                first.vstack_mut(&f)?;
            }
            first.rechunk_mut();
            Ok(Some(first))
        };
        if let Some(mut p) = cat(&mut self.points)? {
            write_parquet(
                &dir.join(layout::chunk_name("points", range)),
                &mut p,
                write::POINTS_ROW_GROUP,
            )?;
        }
        if let Some(mut s) = cat(&mut self.samples)? {
            write_parquet(
                &dir.join(layout::chunk_name("samples", range)),
                &mut s,
                write::SAMPLES_ROW_GROUP,
            )?;
        }
        if let Some(mut c) = cat(&mut self.counters)? {
            write_parquet(
                &dir.join(layout::chunk_name("counters", range)),
                &mut c,
                write::SAMPLES_ROW_GROUP,
            )?;
        }
        let mut r = cat(&mut self.runs)?.expect("a range means runs");
        write_parquet(
            &dir.join(layout::chunk_name("runs", range)),
            &mut r,
            write::RUNS_ROW_GROUP,
        )?;
        *self = Merged::default();
        Ok(1)
    }
}

/// Gives a runs frame every column of `columns` (missing labels as nulls), in that order.
fn align(df: DataFrame, columns: &[(PlSmallStr, DataType)]) -> Result<DataFrame> {
    let n = df.height();
    let mut out = Vec::with_capacity(columns.len());
    for (name, dtype) in columns {
        out.push(match df.column(name) {
            Ok(c) => c.clone(),
            Err(_) => Column::full_null(name.clone(), n, dtype),
        });
    }
    Ok(DataFrame::new(n, out)?)
}

/// Merges one month's live batches (in `seq` order) into one batch.
fn merge_month(store: &Store, month: &str, batches: &[Batch]) -> Result<usize> {
    let mut chunks = Vec::new();
    for b in batches {
        chunks.extend(b.chunks()?);
    }
    // The union of the runs columns: the fixed ones in file order, then every label, sorted.
    let union = super::query::runs_schema(&chunks)?;
    let (labels, fixed): (Vec<_>, Vec<_>) = union
        .iter()
        .map(|(n, d)| (n.clone(), d.clone()))
        .partition(|(n, _)| n.starts_with(LABEL_PREFIX));
    let labels: BTreeSet<PlSmallStr> = labels.into_iter().map(|(n, _)| n).collect();
    let columns: Vec<(PlSmallStr, DataType)> = fixed
        .into_iter()
        .chain(labels.into_iter().map(|l| (l, DataType::String)))
        .collect();
    let staging = store
        .root()
        .join("tmp")
        .join(format!("compact-{month}-{}", std::process::id()));
    fs::create_dir_all(&staging).with_context(|| format!("cannot create {}", staging.display()))?;
    let mut merged = Merged::default();
    let mut written = 0;
    for c in &chunks {
        merged
            .runs
            .push(align(read_parquet_columns(&c.runs, None)?, &columns)?);
        let points = read_parquet_columns(&c.points, None)?;
        merged.n_rows += points.height();
        merged.points.push(points);
        if let Some(s) = &c.samples {
            merged.samples.push(read_parquet_columns(s, None)?);
        }
        if let Some(k) = &c.counters {
            merged.counters.push(read_parquet_columns(k, None)?);
        }
        merged.n_runs += (c.range.last - c.range.first + 1) as usize;
        merged.range = Some(match merged.range {
            None => c.range,
            Some(r) => SeqRange {
                first: r.first,
                last: c.range.last,
            },
        });
        if merged.full() {
            written += merged.flush(&staging)?;
        }
    }
    written += merged.flush(&staging)?;
    let mut fps = Vec::new();
    for c in &chunks {
        fps.extend(write::chunk_entries(&c.runs)?);
    }
    write_synced(&staging.join("ids.fp"), &fingerprints::encode(fps))?;
    let range = SeqRange {
        first: batches[0].range.first,
        last: batches.last().expect("two or more").range.last,
    };
    write::publish(store.root(), &staging, month, range)?;
    // From here the merged batch supersedes the inputs; removing them is tidying.
    for b in batches {
        fs::remove_dir_all(&b.dir)
            .with_context(|| format!("cannot remove merged {}", b.dir.display()))?;
    }
    Ok(written)
}

impl Store {
    /// Merges the batches of every month that has more than one.
    pub fn compact(&self) -> Result<CompactOutcome> {
        let _lock = self.lock()?;
        self.clean()?;
        let live = layout::live_batches(self.root())?;
        let mut months: Vec<String> = live.iter().map(|b| b.month.clone()).collect();
        months.sort();
        months.dedup();
        let mut outcome = CompactOutcome::default();
        for month in months {
            let batches: Vec<Batch> = live.iter().filter(|b| b.month == month).cloned().collect();
            if batches.len() < 2 {
                continue;
            }
            outcome.months += 1;
            outcome.batches_merged += batches.len();
            outcome.chunks_written += merge_month(self, &month, &batches)?;
        }
        write::rebuild_index(self.root())?;
        Ok(outcome)
    }
}

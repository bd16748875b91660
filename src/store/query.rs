//! Reading a selection of runs: a polars lazy scan over the live chunk files, with the
//! `--where` predicate and the needed columns pushed down to Parquet, so the cost follows the
//! question rather than the history.
//!
//! 1. The runs tables are scanned with the predicate; row groups whose statistics rule the
//!    predicate out (a `label:build` no group holds, a `run_seq` range) are never decoded, and
//!    the `label:*` columns are read only where the predicate needs them.
//! 2. The selected runs' `run_seq` values decide which points and samples chunks are opened at
//!    all (each file's name carries its range), and a `run_seq` predicate prunes their row
//!    groups.

use super::frames::{self, LABEL_PREFIX, RUN_SEQ};
use super::layout::{self, Batch, Chunk};
use crate::model::Run;
use anyhow::{Context, Result};
use polars::prelude::*;
use std::collections::{BTreeSet, HashMap};
use std::fs::File;

/// What is in the store at one moment: the live chunks and the union of their runs columns.
pub struct Snapshot {
    pub batches: Vec<Batch>,
    pub chunks: Vec<Chunk>,
    /// Union of the runs files' schemas (files differ only in their `label:*` columns).
    pub runs_schema: Schema,
}

impl Snapshot {
    pub fn take(root: &std::path::Path) -> Result<Snapshot> {
        let batches = layout::live_batches(root)?;
        let mut chunks = Vec::new();
        for b in &batches {
            chunks.extend(b.chunks()?);
        }
        let mut runs_schema = Schema::default();
        for c in &chunks {
            let f =
                File::open(&c.runs).with_context(|| format!("cannot open {}", c.runs.display()))?;
            let arrow = ParquetReader::new(f)
                .schema()
                .map_err(anyhow::Error::from)
                .with_context(|| format!("{}: corrupt Parquet file", c.runs.display()))?;
            for (name, field) in arrow.iter() {
                if runs_schema.get(name).is_none() {
                    runs_schema.with_column(name.clone(), DataType::from_arrow_field(field));
                }
            }
        }
        Ok(Snapshot {
            batches,
            chunks,
            runs_schema,
        })
    }

    /// Label keys that some stored run has.
    pub fn label_keys(&self) -> BTreeSet<String> {
        self.runs_schema
            .iter_names()
            .filter_map(|n| n.strip_prefix(LABEL_PREFIX))
            .map(str::to_string)
            .collect()
    }

    /// The runs (with measurements and samples) for which `predicate` may hold, in `run_seq`
    /// order. `None` reads every run.
    pub fn read(&self, predicate: Option<Expr>) -> Result<Vec<Run>> {
        if self.chunks.is_empty() {
            return Ok(Vec::new());
        }
        let base: Vec<Expr> = self
            .runs_schema
            .iter_names()
            .filter(|n| !n.starts_with(LABEL_PREFIX))
            .map(|n| col(n.clone()))
            .collect();
        let files: Vec<_> = self.chunks.iter().map(|c| c.runs.clone()).collect();
        let mut lf = scan(&files, Some(self.runs_schema.clone()))?;
        if let Some(p) = predicate {
            lf = lf.filter(p);
        }
        let df = lf
            .select(base)
            .collect()
            .map_err(anyhow::Error::from)
            .context("cannot read the store's runs")?;
        let seqs = frames::run_seqs(&df)?;
        let mut runs = frames::runs_from_frame(&df)?;
        if runs.is_empty() {
            return Ok(runs);
        }
        let mut sorted = seqs.clone();
        sorted.sort_unstable();
        let index: HashMap<String, usize> = runs
            .iter()
            .enumerate()
            .map(|(i, r)| (r.run_id.clone(), i))
            .collect();
        let wanted = |c: &&Chunk| c.range.contains_any(&sorted);
        // One chunk file at a time: the frame in memory is one file's selected rows, and each
        // measurement moves straight into its run.
        for c in self.chunks.iter().filter(wanted) {
            let points = scan_selected(std::slice::from_ref(&c.points), &sorted)?;
            let mut counts = vec![0usize; runs.len()];
            for id in points.column("run_id")?.str()?.iter().flatten() {
                if let Some(&i) = index.get(id) {
                    counts[i] += 1;
                }
            }
            for (r, n) in runs.iter_mut().zip(counts) {
                r.measurements.reserve_exact(n);
            }
            frames::for_each_point(&points, |id, m| {
                if let Some(&i) = index.get(id) {
                    runs[i].measurements.push(m);
                }
                Ok(())
            })?;
        }
        let sample_files: Vec<_> = self
            .chunks
            .iter()
            .filter(wanted)
            .filter_map(|c| c.samples.clone())
            .collect();
        if !sample_files.is_empty() {
            let samples = scan_selected(&sample_files, &sorted)?;
            frames::attach_samples(&samples, &mut runs)?;
        }
        Ok(runs)
    }
}

/// The union of the runs files' schemas, from their footers: the columns of the first file in
/// order, then the `label:*` columns other files add.
pub(super) fn runs_schema(chunks: &[Chunk]) -> Result<Schema> {
    let mut schema = Schema::default();
    for c in chunks {
        let f = File::open(&c.runs).with_context(|| format!("cannot open {}", c.runs.display()))?;
        let arrow = ParquetReader::new(f)
            .schema()
            .map_err(anyhow::Error::from)
            .with_context(|| format!("{}: corrupt Parquet file", c.runs.display()))?;
        for (name, field) in arrow.iter() {
            if schema.get(name).is_none() {
                schema.with_column(name.clone(), DataType::from_arrow_field(field));
            }
        }
    }
    Ok(schema)
}

/// A lazy scan of Parquet files (hive columns off: linkperf reads its own names).
pub(super) fn scan(files: &[std::path::PathBuf], schema: Option<Schema>) -> Result<LazyFrame> {
    let paths: Vec<PlRefPath> = files
        .iter()
        .map(|p| PlRefPath::new(p.to_string_lossy().as_ref()))
        .collect();
    let args = ScanArgsParquet {
        hive_options: HiveOptions {
            enabled: Some(false),
            ..Default::default()
        },
        allow_missing_columns: schema.is_some(),
        schema: schema.map(Arc::new),
        glob: false,
        ..Default::default()
    };
    LazyFrame::scan_parquet_files(paths.into_iter().collect(), args).map_err(anyhow::Error::from)
}

/// Rows of `files` whose `run_seq` is one of `sorted` (the range first, for row-group pruning).
fn scan_selected(files: &[std::path::PathBuf], sorted: &[u64]) -> Result<DataFrame> {
    let (lo, hi) = (sorted[0], *sorted.last().expect("non-empty"));
    let set = Series::new("seqs".into(), sorted);
    scan(files, None)?
        .filter(
            col(RUN_SEQ)
                .gt_eq(lit(lo))
                .and(col(RUN_SEQ).lt_eq(lit(hi)))
                .and(col(RUN_SEQ).is_in(lit(set).implode(false), false)),
        )
        .collect()
        .map_err(anyhow::Error::from)
        .context("cannot read the store's points")
}

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

    /// The runs (with measurements, samples and counter changes) for which `predicate` may hold, in `run_seq`
    /// order. `None` reads every run.
    pub fn read(&self, predicate: Option<Expr>) -> Result<Vec<Run>> {
        let (mut runs, seqs) = self.read_runs(predicate, &[])?;
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
        self.attach_counters(&sorted, &mut runs)?;
        Ok(runs)
    }

    /// Gives `runs` (whose `run_seq`s are `sorted`) their counter changes; only the counters
    /// files of chunks that hold one of them are opened.
    pub fn attach_counters(&self, sorted: &[u64], runs: &mut [Run]) -> Result<()> {
        let files: Vec<_> = self
            .chunks
            .iter()
            .filter(|c| c.range.contains_any(sorted))
            .filter_map(|c| c.counters.clone())
            .collect();
        if !files.is_empty() && !runs.is_empty() {
            let counters = scan_selected(&files, sorted)?;
            frames::attach_counters(&counters, runs)?;
        }
        Ok(())
    }

    /// The runs for which `predicate` may hold, without their measurements and without the
    /// `skip` columns (some of [`frames::DETAIL_COLUMNS`]), and their `run_seq`s, in store
    /// order. `None` reads every run.
    pub fn read_runs(
        &self,
        predicate: Option<Expr>,
        skip: &[&str],
    ) -> Result<(Vec<Run>, Vec<u64>)> {
        if self.chunks.is_empty() {
            return Ok((Vec::new(), Vec::new()));
        }
        let base: Vec<Expr> = self
            .runs_schema
            .iter_names()
            .filter(|n| !n.starts_with(LABEL_PREFIX) && !skip.contains(&n.as_str()))
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
        Ok((frames::runs_from_frame(&df)?, frames::run_seqs(&df)?))
    }

    /// Only `columns` (and `run_seq`) of the measurements of the runs `seqs` (sorted): what a
    /// command that computes over points needs, without building a [`crate::model::Measurement`]
    /// per row. Rows of one run stay together and in file order.
    pub fn read_rows(&self, seqs: &[u64], columns: &[&str]) -> Result<DataFrame> {
        let mut wanted = vec![col(RUN_SEQ)];
        wanted.extend(columns.iter().map(|c| col(*c)));
        let mut out: Option<DataFrame> = None;
        if !seqs.is_empty() {
            for c in self.chunks.iter().filter(|c| c.range.contains_any(seqs)) {
                let df = selected(std::slice::from_ref(&c.points), seqs)?
                    .select(wanted.clone())
                    .collect()
                    .map_err(anyhow::Error::from)
                    .context("cannot read the store's points")?;
                out = Some(match out {
                    None => df,
                    Some(mut all) => {
                        all.vstack_mut_owned(df)?;
                        all
                    }
                });
            }
        }
        match out {
            Some(df) => Ok(df),
            // No file holds the runs: an empty frame of the points schema's columns.
            None => {
                let empty = self.chunks.first().map(|c| {
                    scan(std::slice::from_ref(&c.points), None)?
                        .select(wanted.clone())
                        .limit(0)
                        .collect()
                        .map_err(anyhow::Error::from)
                });
                match empty {
                    Some(df) => df,
                    None => Ok(DataFrame::empty()),
                }
            }
        }
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

/// A scan of the rows of `files` whose `run_seq` is one of `sorted` (the range first, for
/// row-group pruning).
fn selected(files: &[std::path::PathBuf], sorted: &[u64]) -> Result<LazyFrame> {
    let (lo, hi) = (sorted[0], *sorted.last().expect("non-empty"));
    let set = Series::new("seqs".into(), sorted);
    Ok(scan(files, None)?.filter(
        col(RUN_SEQ)
            .gt_eq(lit(lo))
            .and(col(RUN_SEQ).lt_eq(lit(hi)))
            .and(col(RUN_SEQ).is_in(lit(set).implode(false), false)),
    ))
}

/// Rows of `files` whose `run_seq` is one of `sorted`.
fn scan_selected(files: &[std::path::PathBuf], sorted: &[u64]) -> Result<DataFrame> {
    selected(files, sorted)?
        .collect()
        .map_err(anyhow::Error::from)
        .context("cannot read the store's points")
}

/// Replaces the `run_seq` column of `rows` by `run`, the position of the run in `order`, and
/// puts the rows in run order (each run's rows keep their file order): a counting sort, since
/// the run index is dense.
pub(super) fn by_run(rows: DataFrame, order: &[u64]) -> Result<DataFrame> {
    if rows.height() == 0 || rows.column(RUN_SEQ).is_err() {
        return Ok(rows);
    }
    let position: HashMap<u64, u32> = order
        .iter()
        .enumerate()
        .map(|(i, &seq)| (seq, i as u32))
        .collect();
    let run: Vec<u32> = rows
        .column(RUN_SEQ)?
        .u64()?
        .iter()
        .map(|seq| {
            seq.and_then(|s| position.get(&s).copied())
                .context("a points row of a run that was not selected")
        })
        .collect::<Result<_>>()?;
    let mut start = vec![0 as IdxSize; order.len() + 1];
    for &r in &run {
        start[r as usize + 1] += 1;
    }
    for i in 1..start.len() {
        start[i] += start[i - 1];
    }
    let mut perm = vec![0 as IdxSize; run.len()];
    for (row, &r) in run.iter().enumerate() {
        perm[start[r as usize] as usize] = row as IdxSize;
        start[r as usize] += 1;
    }
    let mut rows = rows.drop(RUN_SEQ)?;
    rows.with_column(Column::new("run".into(), run))?;
    Ok(rows.take(&IdxCa::from_vec("perm".into(), perm))?)
}

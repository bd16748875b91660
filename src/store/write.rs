//! Adding runs: one import is one batch, staged under `tmp/` and made visible by one rename.

use super::fingerprints::{self, fingerprint, Index};
use super::frames;
use super::layout::{self, Batch, SeqRange};
use crate::model::Run;
use anyhow::{Context, Result};
use polars::prelude::{DataFrame, ParquetCompression, ParquetReader, ParquetWriter, SerReader};
use std::collections::{HashMap, HashSet};
use std::fs::{self, File};
use std::path::{Path, PathBuf};

/// A chunk file is closed once it holds this many runs or measurement rows, so an import's
/// memory is bounded by these plus the largest input file, and compaction's by these alone.
pub const CHUNK_RUNS: usize = 50_000;
pub const CHUNK_ROWS: usize = 500_000;
const CHUNK_SAMPLES: usize = 4_000_000;
/// Row groups are the unit Parquet statistics prune: small for runs (a `--where` on a label
/// reads one group of a build), larger for points and samples (fetched by `run_seq` range).
pub const RUNS_ROW_GROUP: usize = 8_192;
pub const POINTS_ROW_GROUP: usize = 65_536;
pub const SAMPLES_ROW_GROUP: usize = 262_144;

/// Result of adding runs.
#[derive(Debug, Default, Clone, Copy)]
pub struct AddOutcome {
    pub added_runs: usize,
    pub added_rows: usize,
    pub already_stored: usize,
}

/// Runs waiting to be written as the next chunk of a batch.
#[derive(Default)]
pub(super) struct ChunkBuffer {
    pub runs: Vec<Run>,
    pub seqs: Vec<u64>,
    pub imported_at: Vec<i64>,
    pub rows: usize,
    pub samples: usize,
}

impl ChunkBuffer {
    pub fn push(&mut self, run: Run, seq: u64, imported_at: i64) {
        self.rows += run.measurements.len();
        self.samples += run
            .measurements
            .iter()
            .map(|m| m.samples_us.len())
            .sum::<usize>();
        self.runs.push(run);
        self.seqs.push(seq);
        self.imported_at.push(imported_at);
    }

    pub fn full(&self) -> bool {
        self.runs.len() >= CHUNK_RUNS || self.rows >= CHUNK_ROWS || self.samples >= CHUNK_SAMPLES
    }

    /// Writes the buffered runs as one chunk into `dir` and empties the buffer.
    pub fn flush(&mut self, dir: &Path) -> Result<()> {
        if self.runs.is_empty() {
            return Ok(());
        }
        let range = SeqRange {
            first: self.seqs[0],
            last: *self.seqs.last().expect("non-empty"),
        };
        write_parquet(
            &dir.join(layout::chunk_name("points", range)),
            &mut frames::points_frame(&self.runs, &self.seqs)?,
            POINTS_ROW_GROUP,
        )?;
        if let Some(mut samples) = frames::samples_frame(&self.runs, &self.seqs)? {
            write_parquet(
                &dir.join(layout::chunk_name("samples", range)),
                &mut samples,
                SAMPLES_ROW_GROUP,
            )?;
        }
        if let Some(mut counters) = frames::counters_frame(&self.runs, &self.seqs)? {
            write_parquet(
                &dir.join(layout::chunk_name("counters", range)),
                &mut counters,
                SAMPLES_ROW_GROUP,
            )?;
        }
        // The runs file goes last: it is what marks a chunk as present.
        write_parquet(
            &dir.join(layout::chunk_name("runs", range)),
            &mut frames::runs_frame(&self.runs, &self.seqs, &self.imported_at)?,
            RUNS_ROW_GROUP,
        )?;
        *self = ChunkBuffer::default();
        Ok(())
    }
}

/// An import in progress: holds the writer lock until committed or dropped. Dropping it without
/// commit leaves only a staging directory, which the next writer removes.
pub struct Transaction {
    pub(super) _lock: File,
    pub(super) root: PathBuf,
    pub(super) staging: PathBuf,
    pub(super) now: i64,
    pub(super) first_seq: u64,
    pub(super) next_seq: u64,
    pub(super) live: Vec<Batch>,
    pub(super) index: Option<Index>,
    /// Entries of the live batches newer than the index, read on the first add.
    pub(super) recent: Option<Vec<RecentBatch>>,
    /// Run ids of the recent batches a fingerprint hit made us read.
    pub(super) confirmed: HashMap<usize, HashSet<String>>,
    pub(super) seen: HashSet<String>,
    pub(super) new_fps: Vec<(u64, u64)>,
    pub(super) buffer: ChunkBuffer,
    pub(super) outcome: AddOutcome,
}

/// A live batch newer than the index: its position in `live` and its (fingerprint, run_seq)
/// entries (`None` when its `ids.fp` is unreadable: then its ids are read on every check).
pub(super) type RecentBatch = (usize, Option<Vec<(u64, u64)>>);

/// Live batches not covered by `index`.
fn newer_than_index(live: &[Batch], index: Option<&Index>) -> Vec<usize> {
    let covers = index.map_or(0, |i| i.covers);
    (0..live.len())
        .filter(|&i| live[i].range.last > covers)
        .collect()
}

impl Transaction {
    /// True when a run with this id is in a committed batch (never decided by fingerprint
    /// alone: a hit is confirmed against the stored `run_id`).
    fn stored(&mut self, run_id: &str) -> Result<bool> {
        let fp = fingerprint(run_id);
        if self.recent.is_none() {
            let newer = newer_than_index(&self.live, self.index.as_ref());
            self.recent = Some(
                newer
                    .into_iter()
                    .map(|i| (i, fingerprints::read(&self.live[i].fingerprints()).ok()))
                    .collect(),
            );
        }
        let candidates: Vec<usize> = self
            .recent
            .as_ref()
            .expect("read above")
            .iter()
            .filter(|(_, e)| {
                e.as_ref()
                    .is_none_or(|e| fingerprints::lookup(e, fp).next().is_some())
            })
            .map(|(i, _)| *i)
            .collect();
        for i in candidates {
            if !self.confirmed.contains_key(&i) {
                let ids = batch_run_ids(&self.live[i])?;
                self.confirmed.insert(i, ids);
            }
            if self.confirmed[&i].contains(run_id) {
                return Ok(true);
            }
        }
        if let Some(index) = &self.index {
            for seq in index.lookup(fp)? {
                if run_id_at(&self.live, seq)?.as_deref() == Some(run_id) {
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }

    /// Adds the runs not stored yet; full chunks are written to the staging batch as they fill.
    pub fn add(&mut self, runs: Vec<Run>) -> Result<()> {
        for r in runs {
            if self.seen.contains(&r.run_id) || self.stored(&r.run_id)? {
                self.outcome.already_stored += 1;
                continue;
            }
            self.seen.insert(r.run_id.clone());
            let seq = self.next_seq;
            self.next_seq += 1;
            self.new_fps.push((fingerprint(&r.run_id), seq));
            self.outcome.added_runs += 1;
            self.outcome.added_rows += r.measurements.len();
            self.buffer.push(r, seq, self.now);
            if self.buffer.full() {
                self.buffer.flush(&self.staging)?;
            }
        }
        Ok(())
    }

    /// Makes the batch visible with one rename; a batch with nothing new is discarded.
    pub fn commit(self) -> Result<AddOutcome> {
        self.commit_after(|| {})
    }

    /// [`Transaction::commit`], calling `before_publish` once the batch is written and before
    /// it is made visible: the seam the crash test uses to die at the worst moment.
    pub fn commit_after(mut self, before_publish: impl FnOnce()) -> Result<AddOutcome> {
        if self.outcome.added_runs == 0 {
            fs::remove_dir_all(&self.staging)
                .with_context(|| format!("cannot clean {}", self.staging.display()))?;
            return Ok(self.outcome);
        }
        self.buffer.flush(&self.staging)?;
        write_synced(
            &self.staging.join("ids.fp"),
            &fingerprints::encode(std::mem::take(&mut self.new_fps)),
        )?;
        before_publish();
        let range = SeqRange {
            first: self.first_seq,
            last: self.next_seq - 1,
        };
        publish(
            &self.root,
            &self.staging,
            &layout::month_of(self.now),
            range,
        )?;
        // Still under the lock: fold the newer batches into the index once there are many.
        if newer_than_index(&self.live, self.index.as_ref()).len() + 1
            >= fingerprints::REBUILD_AFTER
        {
            rebuild_index(&self.root)?;
        }
        Ok(self.outcome)
    }
}

/// Rewrites the run-id index to cover every live batch (under the writer lock). A batch whose
/// `ids.fp` is unreadable gets its entries from its runs files.
pub(super) fn rebuild_index(root: &Path) -> Result<()> {
    let live = layout::live_batches(root)?;
    let index = Index::open(root);
    let mut entries = match &index {
        Some(i) => i.read_all()?,
        None => Vec::new(),
    };
    for i in newer_than_index(&live, index.as_ref()) {
        let b = &live[i];
        match fingerprints::read(&b.fingerprints()) {
            Ok(e) => entries.extend(e),
            Err(_) => {
                for c in b.chunks()? {
                    entries.extend(chunk_entries(&c.runs)?);
                }
            }
        }
    }
    // A batch straddling the old coverage (a compaction died before rebuilding) repeats
    // entries; they are the same (fingerprint, run_seq) pairs.
    entries.sort_unstable();
    entries.dedup();
    let covers = live.iter().map(|b| b.range.last).max().unwrap_or(0);
    fingerprints::write_index(root, entries, covers)
}

/// The (fingerprint, run_seq) entries of one runs file, read from its columns.
pub(super) fn chunk_entries(runs_file: &Path) -> Result<Vec<(u64, u64)>> {
    let df = read_parquet_columns(runs_file, Some(&["run_id", frames::RUN_SEQ]))?;
    let seqs = frames::run_seqs(&df)?;
    Ok(df
        .column("run_id")?
        .str()?
        .iter()
        .zip(seqs)
        .map(|(id, seq)| (fingerprint(id.unwrap_or_default()), seq))
        .collect())
}

/// The `run_id` stored under `seq`, read from the one chunk whose range holds it.
fn run_id_at(live: &[Batch], seq: u64) -> Result<Option<String>> {
    use polars::prelude::{col, lit};
    for b in live
        .iter()
        .filter(|b| b.range.first <= seq && seq <= b.range.last)
    {
        for c in b.chunks()? {
            if c.range.first <= seq && seq <= c.range.last {
                let df = super::query::scan(std::slice::from_ref(&c.runs), None)?
                    .filter(col(frames::RUN_SEQ).eq(lit(seq)))
                    .select([col("run_id")])
                    .collect()?;
                if let Some(id) = df.column("run_id")?.str()?.get(0) {
                    return Ok(Some(id.to_string()));
                }
            }
        }
    }
    Ok(None)
}

/// Renames a finished staging directory into its month partition: the commit.
pub(super) fn publish(root: &Path, staging: &Path, month: &str, range: SeqRange) -> Result<()> {
    let month_dir = root
        .join(layout::DATA_DIR)
        .join(layout::month_dir_name(month));
    fs::create_dir_all(&month_dir)
        .with_context(|| format!("cannot create {}", month_dir.display()))?;
    let dest = month_dir.join(layout::batch_dir_name(range));
    fs::rename(staging, &dest)
        .with_context(|| format!("cannot commit batch to {}", dest.display()))?;
    // The rename itself must survive a power cut, not only the files.
    if let Ok(d) = File::open(&month_dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Every run id of a batch (its `run_id` columns only).
pub(super) fn batch_run_ids(batch: &Batch) -> Result<HashSet<String>> {
    let mut ids = HashSet::new();
    for c in batch.chunks()? {
        let df = read_parquet_columns(&c.runs, Some(&["run_id"]))?;
        for id in df.column("run_id")?.str()?.iter().flatten() {
            ids.insert(id.to_string());
        }
    }
    Ok(ids)
}

pub(super) fn read_parquet_columns(path: &Path, columns: Option<&[&str]>) -> Result<DataFrame> {
    let f = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut reader = ParquetReader::new(f);
    if let Some(cols) = columns {
        reader = reader.with_columns(Some(cols.iter().map(|c| c.to_string()).collect()));
    }
    reader
        .finish()
        .map_err(anyhow::Error::from)
        .with_context(|| format!("{}: corrupt Parquet file", path.display()))
}

/// Writes a frame to Parquet with statistics on, and syncs it to disk before any commit.
pub(super) fn write_parquet(path: &Path, df: &mut DataFrame, row_group: usize) -> Result<()> {
    let f = File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    ParquetWriter::new(&f)
        .with_compression(ParquetCompression::Zstd(None))
        .with_row_group_size(Some(row_group))
        .with_statistics(polars::prelude::StatisticsOptions::full())
        .finish(df)
        .map_err(anyhow::Error::from)
        .with_context(|| format!("cannot write {}", path.display()))?;
    f.sync_all()
        .with_context(|| format!("cannot sync {}", path.display()))?;
    Ok(())
}

pub(super) fn write_synced(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    let mut f = File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    f.write_all(bytes)
        .and_then(|_| f.sync_all())
        .with_context(|| format!("cannot write {}", path.display()))
}

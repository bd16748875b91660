//! The results store: a directory of Parquet files written with polars.
//!
//! ```text
//! STORE/linkperf-store.json        {"schema_version": 1}
//! STORE/.lock                      held (flock) by every writer
//! STORE/batches/<id>/runs-NNNNNN.parquet    one row per run (one part per input file)
//! STORE/batches/<id>/points-NNNNNN.parquet  one row per measurement
//! STORE/batches/<id>/samples-NNNNNN.parquet per-iteration latency samples (native runner
//!                                            only; absent when a part has none)
//! STORE/tmp/                                batches being written
//! ```
//! An import writes its batch under `tmp/` and renames the finished directory into `batches/`:
//! the rename is the commit, so an import killed part-way leaves the store as it was (its
//! leftovers in `tmp/` are removed by the next writer). Runs are keyed by the content hash of
//! their block; a run already stored is skipped, which makes import idempotent. Writers hold an
//! exclusive lock on `.lock`, so two imports at once serialize instead of both adding a run.

pub mod frames;

use crate::model::Run;
use anyhow::{bail, Context, Result};
use polars::prelude::{DataFrame, ParquetCompression, ParquetReader, ParquetWriter, SerReader};
use std::collections::{BTreeMap, HashSet};
use std::fs::{self, File};
use std::path::{Path, PathBuf};

const MARKER: &str = "linkperf-store.json";

/// An opened store directory.
pub struct Store {
    root: PathBuf,
}

/// Result of adding runs.
#[derive(Debug, Default, Clone, Copy)]
pub struct AddOutcome {
    pub added_runs: usize,
    pub added_rows: usize,
    pub already_stored: usize,
}

impl Store {
    /// Opens a store, creating it when `create` is set.
    pub fn open(root: &Path, create: bool) -> Result<Store> {
        let marker = root.join(MARKER);
        if !marker.exists() {
            if !create {
                bail!(
                    "{} is not a linkperf store (no {MARKER}); run `linkperf import` first",
                    root.display()
                );
            }
            fs::create_dir_all(root.join("batches"))
                .with_context(|| format!("cannot create store directory {}", root.display()))?;
            // A per-process name: two imports creating the same store must not share a file.
            let tmp = root.join(format!("{MARKER}.{}.tmp", std::process::id()));
            fs::write(
                &tmp,
                format!("{{\"schema_version\": {}}}\n", frames::SCHEMA_VERSION),
            )
            .with_context(|| format!("cannot write {}", tmp.display()))?;
            fs::rename(&tmp, &marker)
                .with_context(|| format!("cannot write {}", marker.display()))?;
        }
        let text = fs::read_to_string(&marker)
            .with_context(|| format!("cannot read {}", marker.display()))?;
        let v: serde_json::Value = serde_json::from_str(&text)
            .with_context(|| format!("{}: not valid JSON", marker.display()))?;
        let version = v.get("schema_version").and_then(|v| v.as_u64());
        if version != Some(frames::SCHEMA_VERSION as u64) {
            bail!(
                "{}: store schema version {:?}, this linkperf reads version {}",
                marker.display(),
                version,
                frames::SCHEMA_VERSION
            );
        }
        Ok(Store {
            root: root.to_path_buf(),
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    fn lock(&self) -> Result<File> {
        let path = self.root.join(".lock");
        let f = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .with_context(|| format!("cannot open {}", path.display()))?;
        f.lock()
            .with_context(|| format!("cannot lock {}", path.display()))?;
        Ok(f)
    }

    fn batch_dirs(&self) -> Result<Vec<PathBuf>> {
        let dir = self.root.join("batches");
        let mut out = Vec::new();
        if !dir.exists() {
            return Ok(out);
        }
        for e in fs::read_dir(&dir).with_context(|| format!("cannot list {}", dir.display()))? {
            let p = e?.path();
            if p.is_dir() {
                out.push(p);
            }
        }
        out.sort();
        Ok(out)
    }

    fn read_parquet(path: &Path) -> Result<DataFrame> {
        let f = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
        ParquetReader::new(f)
            .finish()
            .map_err(anyhow::Error::from)
            .with_context(|| format!("{}: corrupt Parquet file", path.display()))
    }

    /// Every committed (runs, points) file pair, in batch and part order.
    fn parts(&self) -> Result<Vec<(PathBuf, PathBuf)>> {
        let mut out = Vec::new();
        for b in self.batch_dirs()? {
            let mut names: Vec<String> = fs::read_dir(&b)
                .with_context(|| format!("cannot list {}", b.display()))?
                .filter_map(|e| e.ok()?.file_name().into_string().ok())
                .filter(|n| n.starts_with("runs-") && n.ends_with(".parquet"))
                .collect();
            names.sort();
            for n in names {
                let points = b.join(n.replacen("runs-", "points-", 1));
                out.push((b.join(&n), points));
            }
        }
        Ok(out)
    }

    fn stored_ids(&self) -> Result<HashSet<String>> {
        let mut ids = HashSet::new();
        for (runs_file, _) in self.parts()? {
            let df = Self::read_parquet(&runs_file)?;
            for id in df.column("run_id")?.str()?.iter().flatten() {
                ids.insert(id.to_string());
            }
        }
        Ok(ids)
    }

    /// Starts an import: takes the writer lock, removes leftovers of imports that died, and
    /// opens a staging batch. Runs are written to it part by part (so memory is bounded by the
    /// largest part, not the whole import); [`Transaction::commit`] makes them visible at once.
    pub fn begin(&self) -> Result<Transaction> {
        let lock = self.lock()?;
        let tmp_root = self.root.join("tmp");
        if tmp_root.exists() {
            // Leftovers of an import that died: never committed, safe to remove under the lock.
            fs::remove_dir_all(&tmp_root)
                .with_context(|| format!("cannot clean {}", tmp_root.display()))?;
        }
        let stored = self.stored_ids()?;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        let batch_id = format!("{now:012}-{}", std::process::id());
        let staging = tmp_root.join(&batch_id);
        fs::create_dir_all(&staging)
            .with_context(|| format!("cannot create {}", staging.display()))?;
        Ok(Transaction {
            _lock: lock,
            root: self.root.clone(),
            staging,
            batch_id,
            stored,
            parts: 0,
            now,
            outcome: AddOutcome::default(),
        })
    }

    /// Adds runs not stored yet, as one atomic batch.
    pub fn add(&self, runs: Vec<Run>) -> Result<AddOutcome> {
        let mut tx = self.begin()?;
        tx.add(runs)?;
        tx.commit()
    }

    /// Reads every stored run with its measurements, sorted by source and line.
    pub fn load(&self) -> Result<Vec<Run>> {
        let mut runs = Vec::new();
        for (runs_file, points_file) in self.parts()? {
            let mut batch = frames::runs_from_frame(&Self::read_parquet(&runs_file)?)
                .with_context(|| format!("{}: unreadable runs", runs_file.display()))?;
            let points = frames::points_from_frame(&Self::read_parquet(&points_file)?)
                .with_context(|| format!("{}: unreadable points", points_file.display()))?;
            let index: BTreeMap<String, usize> = batch
                .iter()
                .enumerate()
                .map(|(i, r)| (r.run_id.clone(), i))
                .collect();
            for (id, m) in points {
                if let Some(&i) = index.get(&id) {
                    batch[i].measurements.push(m);
                }
            }
            let samples_file = runs_file.with_file_name(
                runs_file
                    .file_name()
                    .and_then(|n| n.to_str())
                    .unwrap_or("")
                    .replacen("runs-", "samples-", 1),
            );
            if samples_file.exists() {
                frames::attach_samples(&Self::read_parquet(&samples_file)?, &mut batch)
                    .with_context(|| format!("{}: unreadable samples", samples_file.display()))?;
            }
            runs.extend(batch);
        }
        runs.sort_by(|a, b| (&a.source, a.line, &a.run_id).cmp(&(&b.source, b.line, &b.run_id)));
        Ok(runs)
    }
}

/// An import in progress: holds the writer lock until committed or dropped. Dropping it without
/// commit leaves only a staging directory, which the next writer removes.
pub struct Transaction {
    _lock: File,
    root: PathBuf,
    staging: PathBuf,
    batch_id: String,
    stored: HashSet<String>,
    parts: usize,
    now: i64,
    outcome: AddOutcome,
}

impl Transaction {
    /// Writes the runs not stored yet as one more part of the batch.
    pub fn add(&mut self, runs: Vec<Run>) -> Result<()> {
        let mut fresh = Vec::new();
        for r in runs {
            if self.stored.insert(r.run_id.clone()) {
                fresh.push(r);
            } else {
                self.outcome.already_stored += 1;
            }
        }
        if fresh.is_empty() {
            return Ok(());
        }
        self.parts += 1;
        self.outcome.added_runs += fresh.len();
        self.outcome.added_rows += fresh.iter().map(|r| r.measurements.len()).sum::<usize>();
        let part = format!("{:06}", self.parts);
        write_parquet(
            &self.staging.join(format!("points-{part}.parquet")),
            &mut frames::points_frame(&fresh)?,
        )?;
        if let Some(mut samples) = frames::samples_frame(&fresh)? {
            write_parquet(
                &self.staging.join(format!("samples-{part}.parquet")),
                &mut samples,
            )?;
        }
        // The runs file goes last: a part is complete once its runs file exists.
        write_parquet(
            &self.staging.join(format!("runs-{part}.parquet")),
            &mut frames::runs_frame(&fresh, self.now)?,
        )?;
        Ok(())
    }

    /// Makes the batch visible with one rename; a batch with nothing new is discarded.
    pub fn commit(self) -> Result<AddOutcome> {
        if self.parts == 0 {
            fs::remove_dir_all(&self.staging)
                .with_context(|| format!("cannot clean {}", self.staging.display()))?;
            return Ok(self.outcome);
        }
        if std::env::var_os("LINKPERF_TEST_CRASH_BEFORE_COMMIT").is_some() {
            // Test hook: die the way a killed import dies, after writing and before the commit.
            std::process::abort();
        }
        let dest = self.root.join("batches").join(&self.batch_id);
        fs::rename(&self.staging, &dest)
            .with_context(|| format!("cannot commit batch to {}", dest.display()))?;
        Ok(self.outcome)
    }
}

/// Writes a frame to Parquet and syncs it to disk before the batch is committed.
fn write_parquet(path: &Path, df: &mut DataFrame) -> Result<()> {
    let f = File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    ParquetWriter::new(&f)
        .with_compression(ParquetCompression::Zstd(None))
        .finish(df)
        .map_err(anyhow::Error::from)
        .with_context(|| format!("cannot write {}", path.display()))?;
    f.sync_all()
        .with_context(|| format!("cannot sync {}", path.display()))?;
    Ok(())
}

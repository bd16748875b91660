//! The results store: a directory of Parquet files written with polars, in a documented
//! layout that DuckDB, Spark or pandas read directly (README "Store layout").
//!
//! ```text
//! STORE/linkperf-store.json    {"schema_version": 2}
//! STORE/.lock                  held (flock) by every writer
//! STORE/data/month=YYYY-MM/batch=L-H/runs-L-H.parquet     one row per run
//!                                   /points-L-H.parquet   one row per measurement
//!                                   /samples-L-H.parquet  per-iteration latency samples
//!                                   /counters-L-H.parquet counters that changed across a run
//!                                   /ids.fp               run-id fingerprints of the batch
//! STORE/index/fp-S.idx         fingerprints of every run up to run_seq S (dedupe index)
//! STORE/tmp/                   batches being written
//! ```
//! Every run gets a store-wide sequence number `run_seq`; `L-H` is the first and last one a
//! batch (or chunk file) holds. An import writes its batch under `tmp/` and renames the finished
//! directory into its month partition: the rename is the commit, so an import killed part-way
//! leaves the store as it was (the next writer removes its leftovers). Runs are keyed by the
//! content hash of their block; a run already stored is skipped, which makes import idempotent,
//! and the check reads fingerprints, not the store. Writers hold an exclusive lock on `.lock`,
//! so concurrent imports serialize. `store compact` merges the batches of a month into one
//! (see [`layout`] for why a kill at any point is safe).

pub mod compact;
pub mod fingerprints;
pub mod frames;
pub mod info;
pub mod layout;
pub mod migrate;
pub mod query;
pub mod write;

pub use write::{AddOutcome, Transaction};

use crate::model::Run;
use anyhow::{bail, Context, Result};
use std::collections::{HashMap, HashSet};
use std::fs::{self, File};
use std::path::{Path, PathBuf};

const MARKER: &str = "linkperf-store.json";

/// An opened store directory.
pub struct Store {
    root: PathBuf,
}

impl Store {
    /// Opens a store, creating it when `create` is set. A store of another schema version is
    /// refused with what to do (`store migrate` for version 1), never misread.
    pub fn open(root: &Path, create: bool) -> Result<Store> {
        let marker = root.join(MARKER);
        if !marker.exists() {
            if !create {
                bail!(
                    "{} is not a linkperf store (no {MARKER}); run `linkperf import` first",
                    root.display()
                );
            }
            fs::create_dir_all(root.join(layout::DATA_DIR))
                .with_context(|| format!("cannot create store directory {}", root.display()))?;
            // A per-process temporary name: two imports creating one store share no file.
            write_marker(root, frames::SCHEMA_VERSION)?;
        }
        match declared_version(root)? {
            Some(v) if v == u64::from(frames::SCHEMA_VERSION) => {}
            Some(1) => bail!(
                "{}: store schema version 1; run `linkperf store migrate --store {}` to convert it \
                 to version {} (nothing is read or written until then)",
                marker.display(),
                root.display(),
                frames::SCHEMA_VERSION
            ),
            v => bail!(
                "{}: store schema version {}, this linkperf reads version {}",
                marker.display(),
                v.map_or("unknown".to_string(), |v| v.to_string()),
                frames::SCHEMA_VERSION
            ),
        }
        Ok(Store {
            root: root.to_path_buf(),
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    fn lock(&self) -> Result<File> {
        lock_file(&self.root)
    }

    /// Removes what dead writers left: staging directories, batches a finished compaction
    /// superseded, and the version-1 tree a finished migration left behind. Under the lock.
    fn clean(&self) -> Result<()> {
        for leftover in [self.root.join("tmp"), self.root.join("batches")] {
            if leftover.exists() {
                fs::remove_dir_all(&leftover)
                    .with_context(|| format!("cannot clean {}", leftover.display()))?;
            }
        }
        if let Ok(entries) = fs::read_dir(self.root.join(fingerprints::INDEX_DIR)) {
            for e in entries.flatten() {
                if e.file_name().to_string_lossy().ends_with(".tmp") {
                    let _ = fs::remove_file(e.path());
                }
            }
        }
        let (_, dead) = layout::partition_live(layout::all_batches(&self.root)?);
        for b in dead {
            fs::remove_dir_all(&b.dir)
                .with_context(|| format!("cannot remove superseded {}", b.dir.display()))?;
        }
        Ok(())
    }

    /// Starts an import: takes the writer lock, removes leftovers of writers that died, and
    /// opens a staging batch. Runs are written to it chunk by chunk (so memory is bounded by a
    /// chunk and the largest input, not the whole import); [`Transaction::commit`] makes them
    /// visible at once.
    pub fn begin(&self) -> Result<Transaction> {
        let lock = self.lock()?;
        self.clean()?;
        let live = layout::live_batches(&self.root)?;
        let first_seq = live.iter().map(|b| b.range.last).max().map_or(1, |l| l + 1);
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        let staging = self
            .root
            .join("tmp")
            .join(format!("import-{first_seq}-{}", std::process::id()));
        fs::create_dir_all(&staging)
            .with_context(|| format!("cannot create {}", staging.display()))?;
        Ok(Transaction {
            _lock: lock,
            root: self.root.clone(),
            staging,
            now,
            first_seq,
            next_seq: first_seq,
            index: fingerprints::Index::open(&self.root),
            live,
            recent: None,
            confirmed: HashMap::new(),
            seen: HashSet::new(),
            new_fps: Vec::new(),
            buffer: Default::default(),
            outcome: AddOutcome::default(),
        })
    }

    /// Adds runs not stored yet, as one atomic batch.
    pub fn add(&self, runs: Vec<Run>) -> Result<AddOutcome> {
        let mut tx = self.begin()?;
        tx.add(runs)?;
        tx.commit()
    }

    /// Plans on a fresh snapshot, then reads it. Readers take no lock: a compaction may remove
    /// a superseded batch between listing and reading, and listing again then sees the merged
    /// batch that replaced it, so a failed read is retried (a planning error, such as an unknown
    /// `--where` key, is the user's and is not).
    fn with_snapshot<P, R>(
        &self,
        plan: impl Fn(&query::Snapshot) -> Result<P>,
        read: impl Fn(&query::Snapshot, &P) -> Result<R>,
    ) -> Result<(R, P)> {
        let mut tries = 0;
        loop {
            let snapshot = match query::Snapshot::take(&self.root) {
                Ok(s) => s,
                Err(_) if tries < 3 => {
                    tries += 1;
                    continue;
                }
                Err(e) => return Err(e),
            };
            let planned = plan(&snapshot)?;
            match read(&snapshot, &planned) {
                Ok(r) => return Ok((r, planned)),
                Err(_) if tries < 3 => tries += 1,
                Err(e) => return Err(e),
            }
        }
    }

    /// Reads the runs a plan selects, with their measurements and samples, sorted by source
    /// and line. `plan` sees what is stored (its label columns) and returns the predicate to
    /// push down plus whatever the caller keeps from planning.
    pub fn select_with<T>(
        &self,
        plan: impl Fn(&query::Snapshot) -> Result<(Option<polars::prelude::Expr>, T)>,
    ) -> Result<(Vec<Run>, T)> {
        let (runs, (_, kept)) = self.with_snapshot(plan, |snapshot, (predicate, _)| {
            let mut runs = snapshot.read(predicate.clone())?;
            sort_runs(&mut runs);
            Ok(runs)
        })?;
        Ok((runs, kept))
    }

    /// Reads the runs a plan selects without their measurements and display-only columns
    /// ([`frames::DETAIL_COLUMNS`]: command line, notes, error), sorted by source and line,
    /// keeps those for which `keep` returns something, and reads only `columns` of the kept
    /// runs' measurements: one frame with a `run` column (the index into the returned runs),
    /// the rows of each run together and in file order. Verbs that compute over many points
    /// (compare, gate) use it instead of building a `Measurement` per row.
    pub fn select_rows_with<T, K>(
        &self,
        plan: impl Fn(&query::Snapshot) -> Result<(Option<polars::prelude::Expr>, T)>,
        keep: impl Fn(&Run, &T) -> Option<K>,
        columns: &[&str],
    ) -> Result<Selected<K, T>> {
        let ((runs, rows), (_, kept)) =
            self.with_snapshot(plan, |snapshot, (predicate, kept)| {
                let (runs, seqs) = snapshot.read_runs(predicate.clone(), frames::DETAIL_COLUMNS)?;
                let mut runs: Vec<(u64, Run)> = seqs.into_iter().zip(runs).collect();
                runs.sort_by(|(_, a), (_, b)| {
                    (&a.source, a.line, &a.run_id).cmp(&(&b.source, b.line, &b.run_id))
                });
                let runs: Vec<(u64, Run, K)> = runs
                    .into_iter()
                    .filter_map(|(seq, r)| keep(&r, kept).map(|k| (seq, r, k)))
                    .collect();
                let order: Vec<u64> = runs.iter().map(|(seq, _, _)| *seq).collect();
                let mut sorted = order.clone();
                sorted.sort_unstable();
                let rows = snapshot.read_rows(&sorted, columns)?;
                let rows = query::by_run(rows, &order)?;
                let (mut plain, kept): (Vec<Run>, Vec<K>) =
                    runs.into_iter().map(|(_, r, k)| (r, k)).unzip();
                snapshot.attach_counters(&sorted, &mut plain)?;
                Ok((plain.into_iter().zip(kept).collect(), rows))
            })?;
        Ok(Selected { runs, rows, kept })
    }

    /// Reads the runs for which `predicate` may hold (every run for `None`).
    pub fn select(&self, predicate: Option<polars::prelude::Expr>) -> Result<Vec<Run>> {
        Ok(self.select_with(|_| Ok((predicate.clone(), ())))?.0)
    }

    /// Reads every stored run with its measurements, sorted by source and line.
    pub fn load(&self) -> Result<Vec<Run>> {
        self.select(None)
    }
}

/// What [`Store::select_rows_with`] read.
pub struct Selected<K, T> {
    /// The kept runs (without measurements and display-only columns), sorted by source and
    /// line, each with what `keep` returned for it.
    pub runs: Vec<(Run, K)>,
    /// The requested measurement columns, with `run` indexing `runs`, in run order.
    pub rows: polars::prelude::DataFrame,
    /// What the plan kept.
    pub kept: T,
}

/// The order every read command sees: by source, line, then run id.
pub fn sort_runs(runs: &mut [Run]) {
    runs.sort_by(|a, b| (&a.source, a.line, &a.run_id).cmp(&(&b.source, b.line, &b.run_id)));
}

/// Marker file contents of a store of `version`.
fn marker_text(version: u32) -> String {
    format!("{{\"schema_version\": {version}}}\n")
}

pub(crate) fn lock_file(root: &Path) -> Result<File> {
    let path = root.join(".lock");
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

/// Replaces the marker atomically.
pub(crate) fn write_marker(root: &Path, version: u32) -> Result<()> {
    let marker = root.join(MARKER);
    let tmp = root.join(format!("{MARKER}.{}.tmp", std::process::id()));
    write::write_synced(&tmp, marker_text(version).as_bytes())?;
    fs::rename(&tmp, &marker).with_context(|| format!("cannot write {}", marker.display()))
}

/// The schema version a store directory declares (`None` when it is not a store).
pub fn declared_version(root: &Path) -> Result<Option<u64>> {
    let marker = root.join(MARKER);
    if !marker.exists() {
        return Ok(None);
    }
    let text =
        fs::read_to_string(&marker).with_context(|| format!("cannot read {}", marker.display()))?;
    let v: serde_json::Value = serde_json::from_str(&text)
        .with_context(|| format!("{}: not valid JSON", marker.display()))?;
    Ok(Some(
        v.get("schema_version")
            .and_then(|v| v.as_u64())
            .unwrap_or(0),
    ))
}

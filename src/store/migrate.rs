//! `store migrate`: converts a version-1 store (one `batches/<id>/` directory per import, runs
//! without `run_seq`) to the current layout in place.
//!
//! Under the writer lock, each version-1 batch becomes one batch of its import month (keeping
//! its `imported_at`), in the order the batches were imported. Only when all are written does
//! the marker switch to the new version (one rename); the version-1 tree is removed after. A kill
//! before the switch leaves a version-1 store (the next `migrate` starts over), a kill after it
//! a finished store whose leftovers the next writer removes.

use super::frames::{self, SCHEMA_VERSION};
use super::layout::{self, SeqRange};
use super::write::{self, read_parquet_columns, write_synced, ChunkBuffer};
use super::{declared_version, fingerprints, lock_file, write_marker};
use anyhow::{bail, Context, Result};
use std::fs;
use std::path::{Path, PathBuf};

#[derive(Debug, Default, Clone, Copy)]
pub struct MigrateOutcome {
    pub from_version: u64,
    pub batches: usize,
    pub runs: usize,
}

fn v1_batch_dirs(root: &Path) -> Result<Vec<PathBuf>> {
    let dir = root.join("batches");
    let mut out = Vec::new();
    if dir.exists() {
        for e in fs::read_dir(&dir).with_context(|| format!("cannot list {}", dir.display()))? {
            let p = e?.path();
            if p.is_dir() {
                out.push(p);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The runs of one version-1 batch, with measurements and samples, and their import time.
fn read_v1_batch(dir: &Path) -> Result<Vec<(crate::model::Run, i64)>> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .with_context(|| format!("cannot list {}", dir.display()))?
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with("runs-") && n.ends_with(".parquet"))
        .collect();
    names.sort();
    let mut out = Vec::new();
    for n in names {
        let runs_file = dir.join(&n);
        let df = read_parquet_columns(&runs_file, None)?;
        let imported: Vec<i64> = df
            .column("imported_at")?
            .i64()?
            .iter()
            .map(|v| v.unwrap_or(0))
            .collect();
        let mut runs = frames::runs_from_frame(&df)
            .with_context(|| format!("{}: unreadable runs", runs_file.display()))?;
        let index: std::collections::HashMap<String, usize> = runs
            .iter()
            .enumerate()
            .map(|(i, r)| (r.run_id.clone(), i))
            .collect();
        let points_file = dir.join(n.replacen("runs-", "points-", 1));
        for (id, m) in frames::points_from_frame(&read_parquet_columns(&points_file, None)?)
            .with_context(|| format!("{}: unreadable points", points_file.display()))?
        {
            if let Some(&i) = index.get(&id) {
                runs[i].measurements.push(m);
            }
        }
        let samples_file = dir.join(n.replacen("runs-", "samples-", 1));
        if samples_file.exists() {
            frames::attach_samples(&read_parquet_columns(&samples_file, None)?, &mut runs)
                .with_context(|| format!("{}: unreadable samples", samples_file.display()))?;
        }
        out.extend(runs.into_iter().zip(imported));
    }
    Ok(out)
}

/// Migrates the store at `root` to the current schema version.
pub fn migrate(root: &Path) -> Result<MigrateOutcome> {
    let Some(version) = declared_version(root)? else {
        bail!(
            "{} is not a linkperf store (no linkperf-store.json)",
            root.display()
        );
    };
    let mut outcome = MigrateOutcome {
        from_version: version,
        ..Default::default()
    };
    if version == u64::from(SCHEMA_VERSION) {
        return Ok(outcome);
    }
    if version != 1 {
        bail!(
            "{}: store schema version {version} cannot be migrated",
            root.display()
        );
    }
    let _lock = lock_file(root)?;
    // Leftovers of a migration that died before the switch are not part of the store.
    for leftover in [
        root.join("tmp"),
        root.join(layout::DATA_DIR),
        root.join(fingerprints::INDEX_DIR),
    ] {
        if leftover.exists() {
            fs::remove_dir_all(&leftover)
                .with_context(|| format!("cannot clean {}", leftover.display()))?;
        }
    }
    let mut next_seq = 1;
    for dir in v1_batch_dirs(root)? {
        let runs = read_v1_batch(&dir)?;
        if runs.is_empty() {
            continue;
        }
        let first = next_seq;
        let month = layout::month_of(runs[0].1);
        let staging = root.join("tmp").join(format!("migrate-{first}"));
        fs::create_dir_all(&staging)
            .with_context(|| format!("cannot create {}", staging.display()))?;
        let mut buffer = ChunkBuffer::default();
        let mut fps = Vec::new();
        for (run, imported_at) in runs {
            fps.push((fingerprints::fingerprint(&run.run_id), next_seq));
            buffer.push(run, next_seq, imported_at);
            next_seq += 1;
            if buffer.full() {
                buffer.flush(&staging)?;
            }
        }
        buffer.flush(&staging)?;
        outcome.runs += fps.len();
        write_synced(&staging.join("ids.fp"), &fingerprints::encode(fps))?;
        let range = SeqRange {
            first,
            last: next_seq - 1,
        };
        write::publish(root, &staging, &month, range)?;
        outcome.batches += 1;
    }
    write::rebuild_index(root)?;
    write_marker(root, SCHEMA_VERSION)?;
    fs::remove_dir_all(root.join("batches")).ok();
    Ok(outcome)
}

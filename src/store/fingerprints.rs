//! The run-id index that keeps an import's cost tied to its batch, not to the store.
//!
//! Entries are (64-bit FNV-1a fingerprint of the run id, `run_seq`), sorted, little-endian, 16
//! bytes a run. Each batch directory holds its own entries in `ids.fp`; `STORE/index/fp-S.idx`
//! holds those of every run with `run_seq` ≤ S, and is rebuilt (written aside, renamed) by
//! `store compact` and once 64 batches are newer than it. An import looks each new run up by
//! binary search in the index (reading about 20 entries of it, not the file) and in the
//! `ids.fp` of the few newer batches. A hit means "probably stored": it is confirmed by reading
//! that run's `run_id` from the chunk its `run_seq` names, so a collision costs a read, never a
//! lost run. The index is derived data: missing or damaged, it is rebuilt from the batches.

use anyhow::{Context, Result};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

pub const INDEX_DIR: &str = "index";
/// Newer batches allowed before the index is rebuilt.
pub const REBUILD_AFTER: usize = 64;

/// FNV-1a, 64 bit: stable across versions and platforms, which the files on disk rely on.
pub fn fingerprint(run_id: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in run_id.as_bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Sorted (fingerprint, run_seq) entries as file bytes.
pub fn encode(mut entries: Vec<(u64, u64)>) -> Vec<u8> {
    entries.sort_unstable();
    let mut out = Vec::with_capacity(entries.len() * 16);
    for (fp, seq) in entries {
        out.extend_from_slice(&fp.to_le_bytes());
        out.extend_from_slice(&seq.to_le_bytes());
    }
    out
}

fn decode(bytes: &[u8]) -> Vec<(u64, u64)> {
    bytes
        .chunks_exact(16)
        .map(|c| {
            (
                u64::from_le_bytes(c[..8].try_into().expect("8 bytes")),
                u64::from_le_bytes(c[8..].try_into().expect("8 bytes")),
            )
        })
        .collect()
}

/// Reads a whole entries file (a batch's `ids.fp`, or an index being rebuilt).
pub fn read(path: &Path) -> Result<Vec<(u64, u64)>> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    if bytes.len() % 16 != 0 {
        anyhow::bail!(
            "{}: not a fingerprint file (length {})",
            path.display(),
            bytes.len()
        );
    }
    Ok(decode(&bytes))
}

/// The `run_seq`s whose fingerprint is `fp`, from sorted entries in memory.
pub fn lookup(entries: &[(u64, u64)], fp: u64) -> impl Iterator<Item = u64> + '_ {
    let i = entries.partition_point(|&(f, _)| f < fp);
    entries[i..]
        .iter()
        .take_while(move |&&(f, _)| f == fp)
        .map(|&(_, s)| s)
}

/// The store-wide index file, searched on disk without reading it whole.
pub struct Index {
    file: File,
    len: u64,
    /// Every run with `run_seq` ≤ this is in the index.
    pub covers: u64,
}

fn index_name(covers: u64) -> String {
    format!("fp-{covers:012}.idx")
}

/// Index files present, newest (highest coverage) last.
pub fn index_files(root: &Path) -> Vec<(u64, PathBuf)> {
    let mut out: Vec<(u64, PathBuf)> = std::fs::read_dir(root.join(INDEX_DIR))
        .map(|d| {
            d.filter_map(|e| {
                let e = e.ok()?;
                let n = e.file_name().into_string().ok()?;
                let s = n.strip_prefix("fp-")?.strip_suffix(".idx")?.parse().ok()?;
                Some((s, e.path()))
            })
            .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

impl Index {
    /// The newest index of the store, if one is readable.
    pub fn open(root: &Path) -> Option<Index> {
        let (covers, path) = index_files(root).pop()?;
        let file = File::open(path).ok()?;
        let len = file.metadata().ok()?.len();
        (len % 16 == 0).then_some(Index { file, len, covers })
    }

    fn entry(&self, i: u64) -> Result<(u64, u64)> {
        let mut buf = [0u8; 16];
        self.file
            .read_exact_at(&mut buf, i * 16)
            .context("cannot read the run-id index")?;
        Ok(decode(&buf)[0])
    }

    /// The `run_seq`s whose fingerprint is `fp` (binary search with positioned reads).
    pub fn lookup(&self, fp: u64) -> Result<Vec<u64>> {
        let (mut lo, mut hi) = (0, self.len / 16);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.entry(mid)?.0 < fp {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        let mut out = Vec::new();
        while lo < self.len / 16 {
            let (f, s) = self.entry(lo)?;
            if f != fp {
                break;
            }
            out.push(s);
            lo += 1;
        }
        Ok(out)
    }

    pub fn read_all(&self) -> Result<Vec<(u64, u64)>> {
        let mut bytes = vec![0u8; self.len as usize];
        self.file
            .read_exact_at(&mut bytes, 0)
            .context("cannot read the run-id index")?;
        Ok(decode(&bytes))
    }
}

/// Writes a new index covering `covers` (aside, then renamed) and removes older ones.
pub fn write_index(root: &Path, entries: Vec<(u64, u64)>, covers: u64) -> Result<()> {
    let dir = root.join(INDEX_DIR);
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let tmp = dir.join(format!("{}.{}.tmp", index_name(covers), std::process::id()));
    super::write::write_synced(&tmp, &encode(entries))?;
    let dest = dir.join(index_name(covers));
    std::fs::rename(&tmp, &dest).with_context(|| format!("cannot write {}", dest.display()))?;
    for (s, p) in index_files(root) {
        if s < covers {
            let _ = std::fs::remove_file(p);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_are_fnv1a_and_the_index_finds_every_entry() {
        // Reference values of FNV-1a 64.
        assert_eq!(fingerprint(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fingerprint("a"), 0xaf63_dc4c_8601_ec8c);
        let dir = tempfile::tempdir().unwrap();
        let entries: Vec<(u64, u64)> = (0..1000u64).map(|i| (i * 7 % 13, i)).collect();
        write_index(dir.path(), entries.clone(), 999).unwrap();
        write_index(dir.path(), entries.clone(), 1000).unwrap();
        assert_eq!(index_files(dir.path()).len(), 1, "older indexes removed");
        let idx = Index::open(dir.path()).unwrap();
        assert_eq!(idx.covers, 1000);
        let mut sorted = entries.clone();
        sorted.sort();
        for fp in 0..14 {
            let want: Vec<u64> = lookup(&sorted, fp).collect();
            assert_eq!(idx.lookup(fp).unwrap(), want, "fp {fp}");
        }
        assert!(idx.lookup(13).unwrap().is_empty());
        assert_eq!(idx.read_all().unwrap(), sorted);
        let p = dir.path().join("ids.fp");
        std::fs::write(&p, b"123").unwrap();
        assert!(read(&p).is_err());
    }
}

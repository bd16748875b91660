//! The run-id index that keeps an import's cost tied to its batch, not to the store.
//!
//! Each batch directory holds `ids.fp`: the sorted 64-bit FNV-1a fingerprints of its run ids,
//! little-endian, 8 bytes a run. An import checks each new run's fingerprint against these
//! arrays (a binary search each; reading them costs 8 bytes per stored run, megabytes for a
//! million runs) and only for a hit, which means "probably stored", reads that batch's
//! `run_id` column to confirm. Fingerprints never decide alone, so a collision costs a read,
//! never a lost run.

use anyhow::{Context, Result};
use std::path::Path;

/// FNV-1a, 64 bit: stable across versions and platforms, which the files on disk rely on.
pub fn fingerprint(run_id: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in run_id.as_bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Sorted fingerprints as file bytes.
pub fn encode(mut fps: Vec<u64>) -> Vec<u8> {
    fps.sort_unstable();
    fps.iter().flat_map(|f| f.to_le_bytes()).collect()
}

/// Reads a fingerprint file (sorted, as written by [`encode`]).
pub fn read(path: &Path) -> Result<Vec<u64>> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    if bytes.len() % 8 != 0 {
        anyhow::bail!(
            "{}: not a fingerprint file (length {})",
            path.display(),
            bytes.len()
        );
    }
    Ok(bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8-byte chunk")))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_are_fnv1a_and_round_trip_sorted() {
        // Reference values of FNV-1a 64.
        assert_eq!(fingerprint(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fingerprint("a"), 0xaf63_dc4c_8601_ec8c);
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("ids.fp");
        std::fs::write(&p, encode(vec![3, 1, 2])).unwrap();
        assert_eq!(read(&p).unwrap(), vec![1, 2, 3]);
        std::fs::write(&p, b"123").unwrap();
        assert!(read(&p).is_err());
    }
}

//! Where a version-2 store keeps its files, and which of them are live.
//!
//! ```text
//! STORE/data/month=YYYY-MM/batch=LLLLLLLLLLLL-HHHHHHHHHHHH/runs-L-H.parquet
//!                                                          points-L-H.parquet
//!                                                          samples-L-H.parquet
//!                                                          counters-L-H.parquet
//!                                                          ids.fp
//! ```
//! Every run gets a store-wide sequence number (`seq`) when it is first stored; a batch
//! directory is named after the first and last `seq` it holds, and so is each chunk file in it.
//! Batches of one month never overlap, except while `store compact` replaces several of them by
//! one that covers them all: a batch whose range lies strictly inside another batch's range of
//! the same month is *superseded*, read by nobody, and removed by the next writer. That is what
//! makes compaction safe to kill at any point: before the merged batch is renamed into place
//! it does not exist; after, the batches it covers no longer count.

use anyhow::{Context, Result};
use std::fs;
use std::path::{Path, PathBuf};

pub const DATA_DIR: &str = "data";
/// Digits of a `seq` in file and directory names (sorts as text in seq order).
const SEQ_DIGITS: usize = 12;

/// An inclusive range of run sequence numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct SeqRange {
    pub first: u64,
    pub last: u64,
}

impl SeqRange {
    pub fn name(self) -> String {
        format!("{:0w$}-{:0w$}", self.first, self.last, w = SEQ_DIGITS)
    }

    pub fn parse(s: &str) -> Option<SeqRange> {
        let (a, b) = s.split_once('-')?;
        let r = SeqRange {
            first: a.parse().ok()?,
            last: b.parse().ok()?,
        };
        (r.first <= r.last).then_some(r)
    }

    /// True when `self` lies inside `other` and is not the same range.
    pub fn strictly_inside(self, other: SeqRange) -> bool {
        self != other && other.first <= self.first && self.last <= other.last
    }

    pub fn contains_any(self, sorted: &[u64]) -> bool {
        let i = sorted.partition_point(|&s| s < self.first);
        sorted.get(i).is_some_and(|&s| s <= self.last)
    }
}

/// One chunk file of a batch: runs, points or samples of a `seq` range.
#[derive(Debug, Clone)]
pub struct Chunk {
    pub range: SeqRange,
    pub runs: PathBuf,
    pub points: PathBuf,
    /// Absent when no run of the chunk has per-iteration samples.
    pub samples: Option<PathBuf>,
    /// Absent when no run of the chunk has counter changes.
    pub counters: Option<PathBuf>,
}

/// One committed batch directory.
#[derive(Debug, Clone)]
pub struct Batch {
    pub month: String,
    pub range: SeqRange,
    pub dir: PathBuf,
}

impl Batch {
    pub fn fingerprints(&self) -> PathBuf {
        self.dir.join("ids.fp")
    }

    /// Its chunk files in `seq` order. A chunk is complete once its runs file exists (written
    /// last), but batches are only visible once whole, so every listed chunk is complete.
    pub fn chunks(&self) -> Result<Vec<Chunk>> {
        let mut out = Vec::new();
        let entries = fs::read_dir(&self.dir)
            .with_context(|| format!("cannot list {}", self.dir.display()))?;
        for e in entries {
            let name = e?.file_name();
            let Some(name) = name.to_str() else { continue };
            let Some(range) = name
                .strip_prefix("runs-")
                .and_then(|n| n.strip_suffix(".parquet"))
                .and_then(SeqRange::parse)
            else {
                continue;
            };
            let samples = self.dir.join(chunk_name("samples", range));
            let counters = self.dir.join(chunk_name("counters", range));
            out.push(Chunk {
                range,
                runs: self.dir.join(name),
                points: self.dir.join(chunk_name("points", range)),
                samples: samples.exists().then_some(samples),
                counters: counters.exists().then_some(counters),
            });
        }
        out.sort_by_key(|c| c.range);
        Ok(out)
    }
}

pub fn chunk_name(table: &str, range: SeqRange) -> String {
    format!("{table}-{}.parquet", range.name())
}

pub fn batch_dir_name(range: SeqRange) -> String {
    format!("batch={}", range.name())
}

pub fn month_dir_name(month: &str) -> String {
    format!("month={month}")
}

/// Every batch directory, live or superseded, in (month, range) order.
pub fn all_batches(root: &Path) -> Result<Vec<Batch>> {
    let data = root.join(DATA_DIR);
    let mut out = Vec::new();
    if !data.exists() {
        return Ok(out);
    }
    for m in fs::read_dir(&data).with_context(|| format!("cannot list {}", data.display()))? {
        let m = m?;
        let name = m.file_name();
        let Some(month) = name.to_str().and_then(|n| n.strip_prefix("month=")) else {
            continue;
        };
        let month_dir = m.path();
        for b in fs::read_dir(&month_dir)
            .with_context(|| format!("cannot list {}", month_dir.display()))?
        {
            let b = b?;
            let bname = b.file_name();
            let Some(range) = bname
                .to_str()
                .and_then(|n| n.strip_prefix("batch="))
                .and_then(SeqRange::parse)
            else {
                continue;
            };
            out.push(Batch {
                month: month.to_string(),
                range,
                dir: b.path(),
            });
        }
    }
    out.sort_by(|a, b| (&a.month, a.range).cmp(&(&b.month, b.range)));
    Ok(out)
}

/// Splits batches into (live, superseded). One sweep per month in (first ascending, last
/// descending) order: a batch is inside an earlier one exactly when some earlier batch reaches
/// at least as far, so this stays O(n log n) for stores of many thousand batches.
pub fn partition_live(mut batches: Vec<Batch>) -> (Vec<Batch>, Vec<Batch>) {
    batches.sort_by(|a, b| {
        (&a.month, a.range.first, std::cmp::Reverse(a.range.last)).cmp(&(
            &b.month,
            b.range.first,
            std::cmp::Reverse(b.range.last),
        ))
    });
    let (mut live, mut dead) = (Vec::new(), Vec::new());
    let mut reach: Option<(String, SeqRange)> = None;
    for b in batches {
        let covered = match &reach {
            Some((month, r)) => *month == b.month && b.range.strictly_inside(*r),
            None => false,
        };
        if covered {
            dead.push(b);
            continue;
        }
        let extends = match &reach {
            Some((month, r)) => *month != b.month || b.range.last > r.last,
            None => true,
        };
        if extends {
            reach = Some((b.month.clone(), b.range));
        }
        live.push(b);
    }
    live.sort_by_key(|b| b.range);
    dead.sort_by_key(|b| b.range);
    (live, dead)
}

/// The live batches, in `seq` order.
pub fn live_batches(root: &Path) -> Result<Vec<Batch>> {
    Ok(partition_live(all_batches(root)?).0)
}

/// `YYYY-MM` (UTC) of a Unix time, the partition an import lands in.
pub fn month_of(unix_secs: i64) -> String {
    // Days to civil date (Howard Hinnant's algorithm), so no date crate is needed for a label.
    let z = unix_secs.div_euclid(86_400) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn months_of_unix_times() {
        assert_eq!(month_of(0), "1970-01");
        assert_eq!(month_of(1_796_256_000), "2026-12"); // 2026-12-03
        assert_eq!(month_of(951_782_400), "2000-02"); // 2000-02-29
        assert_eq!(month_of(951_868_800), "2000-03");
    }

    #[test]
    fn superseded_batches_are_those_strictly_inside_another_of_their_month() {
        let b = |month: &str, first, last| Batch {
            month: month.into(),
            range: SeqRange { first, last },
            dir: PathBuf::new(),
        };
        let (live, dead) = partition_live(vec![
            b("2026-11", 1, 10),
            b("2026-11", 11, 20),
            b("2026-11", 1, 20),
            b("2026-11", 5, 8),
            b("2026-12", 21, 30),
            b("2026-12", 2, 4),
        ]);
        let r = |v: &[Batch]| {
            v.iter()
                .map(|b| (b.range.first, b.range.last))
                .collect::<Vec<_>>()
        };
        assert_eq!(r(&live), vec![(1, 20), (2, 4), (21, 30)]);
        assert_eq!(r(&dead), vec![(1, 10), (5, 8), (11, 20)]);
        assert_eq!(
            SeqRange::parse("000000000001-000000000020"),
            Some(SeqRange { first: 1, last: 20 })
        );
        assert_eq!(SeqRange::parse("5-4"), None);
        assert!(SeqRange { first: 5, last: 9 }.contains_any(&[1, 7, 12]));
        assert!(!SeqRange { first: 5, last: 6 }.contains_any(&[1, 7, 12]));
    }
}

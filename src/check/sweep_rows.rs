//! The sweep rows the sweep rule keeps until every single-size run of a file is known. A large
//! file read in pieces has millions of them, more than its pieces' text: past [`SPILL_ROWS`]
//! they go to an unlinked temporary file, so an import's memory follows its pieces, not the
//! file, and are read back once when the rule is finished.

use std::collections::HashMap;
use std::io::{BufReader, Read, Seek, SeekFrom, Write};

/// Rows held in memory before they are written out (about 10 MB).
const SPILL_ROWS: usize = 256 * 1024;

/// Rows encoded at a time when they are written out (about 128 KiB).
const SPILL_CHUNK: usize = 4096;

/// Held rows from which the room grows to [`SPILL_ROWS`] in one step: a small file's few rows
/// take little memory, a large file's take the spill's room once.
const GROW_WHOLE_FROM: usize = 4096;

/// Names (setups, sources, tests) stored once and referred to by number.
#[derive(Debug)]
pub struct Names {
    ids: HashMap<String, u32>,
    names: Vec<String>,
    /// The ids asked for last, latest first (`u32::MAX`: none yet).
    recent: [u32; 4],
}

impl Default for Names {
    fn default() -> Names {
        Names {
            ids: HashMap::new(),
            names: Vec::new(),
            recent: [u32::MAX; 4],
        }
    }
}

impl Names {
    pub fn id(&mut self, name: &str) -> u32 {
        // Each run asks for its setup, source and test, mostly those of the run before: a
        // few comparisons find them, not a hash of each name.
        let is_name = |id: u32| self.names.get(id as usize).is_some_and(|n| n == name);
        if let Some(&id) = self.recent.iter().find(|&&id| is_name(id)) {
            return id;
        }
        let id = match self.ids.get(name) {
            Some(&id) => id,
            None => {
                let id = self.names.len() as u32;
                self.names.push(name.to_string());
                self.ids.insert(name.to_string(), id);
                id
            }
        };
        self.recent.rotate_right(1);
        self.recent[0] = id;
        id
    }

    pub fn get(&self, id: u32) -> &str {
        &self.names[id as usize]
    }

    /// The id here of each of `other`'s names, by `other`'s id.
    pub fn map(&mut self, other: &Names) -> Vec<u32> {
        other.names.iter().map(|n| self.id(n)).collect()
    }
}

/// One row of a sweep, its names by id.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Row {
    pub setup: u32,
    pub source: u32,
    pub test: u32,
    pub line: u32,
    pub size: u64,
    /// 0: bandwidth (`bw_avg_gbps`), 1: typical latency (`lat_typical_us`).
    pub metric: u8,
    pub value: f64,
}

const ROW_BYTES: usize = 4 * 4 + 8 + 1 + 8;

impl Row {
    fn write(&self, out: &mut Vec<u8>) {
        for n in [self.setup, self.source, self.test, self.line] {
            out.extend_from_slice(&n.to_le_bytes());
        }
        out.extend_from_slice(&self.size.to_le_bytes());
        out.push(self.metric);
        out.extend_from_slice(&self.value.to_bits().to_le_bytes());
    }

    fn read(b: &[u8; ROW_BYTES]) -> Row {
        let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"));
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        Row {
            setup: u32_at(0),
            source: u32_at(4),
            test: u32_at(8),
            line: u32_at(12),
            size: u64_at(16),
            metric: b[24],
            value: f64::from_bits(u64_at(25)),
        }
    }
}

/// Rows in the order they were added: the first ones in a file once there are many.
#[derive(Debug, Default)]
pub struct Rows {
    held: Vec<Row>,
    /// The file the rows written out are in, and how many there are.
    spilled: Option<(std::fs::File, usize)>,
    /// Why the written rows cannot be read back, if they cannot.
    broken: Option<std::io::Error>,
}

impl Rows {
    pub fn push(&mut self, row: Row) {
        if self.held.len() == self.held.capacity() && self.held.len() >= GROW_WHOLE_FROM {
            // A large file's rows: room for all that are held before a spill at once, rather
            // than doubling up to it (each doubling copied the rows into new pages, on the
            // thread that hands results over in order).
            self.held.reserve_exact(SPILL_ROWS - self.held.len());
        }
        self.held.push(row);
        if self.held.len() >= SPILL_ROWS {
            self.spill();
        }
    }

    /// Writes the held rows out; keeps them when no temporary file can be written (memory
    /// then grows, the result does not change).
    fn spill(&mut self) {
        if self.spilled.is_none() {
            self.spilled = temporary_file().ok().map(|f| (f, 0));
        }
        let Some((out, count)) = self.spilled.as_mut() else {
            return;
        };
        // Encoded a few thousand at a time into a buffer written at once: a writer's checks
        // per field were most of the cost of keeping a row.
        let mut bytes = Vec::with_capacity(SPILL_CHUNK * ROW_BYTES);
        let mut write = |rows: &[Row]| {
            bytes.clear();
            rows.iter().for_each(|r| r.write(&mut bytes));
            out.write_all(&bytes)
        };
        let result = self.held.chunks(SPILL_CHUNK).try_for_each(&mut write);
        let written = (*count * ROW_BYTES) as u64;
        match result {
            Ok(()) => {
                *count += self.held.len();
                self.held.clear();
            }
            // Cut back to the whole rows, to be written again at the next spill; a file that
            // cannot be cut back holds rows that would be read wrong.
            Err(_) => {
                let cut = out.set_len(written).and_then(|_| out.seek(SeekFrom::Start(written)));
                if let Err(e) = cut {
                    self.broken = Some(e);
                }
            }
        }
    }

    /// Hands every row to `f`, in order, reading the written ones back one at a time.
    pub fn for_each(self, mut f: impl FnMut(Row)) -> std::io::Result<()> {
        if let Some(e) = self.broken {
            return Err(e);
        }
        if let Some((mut file, count)) = self.spilled {
            file.seek(SeekFrom::Start(0))?;
            let mut input = BufReader::new(file);
            let mut b = [0u8; ROW_BYTES];
            for _ in 0..count {
                input.read_exact(&mut b)?;
                f(Row::read(&b));
            }
        }
        self.held.into_iter().for_each(f);
        Ok(())
    }
}

/// A file in the temporary directory that no other process sees: removed as soon as it is
/// open, so it is gone when the process ends, however it ends.
fn temporary_file() -> std::io::Result<std::fs::File> {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = std::env::temp_dir().join(format!(
        "linkperf-sweeps-{}-{n}.tmp",
        std::process::id()
    ));
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&path)?;
    std::fs::remove_file(&path)?;
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_keeps_the_id_it_got_first_whatever_was_asked_between() {
        let mut names = Names::default();
        let mut first: HashMap<String, u32> = HashMap::new();
        // Runs of a few files, each asking for a setup, its source and a test; then the same
        // names again in another order, and names that share a prefix.
        let asked = (0..300).map(|i| match i % 3 {
            0 => format!("setup{}", i % 11),
            1 => format!("file{}", i / 30),
            _ => format!("setup{}", i % 5).chars().take(6).collect(),
        });
        for name in asked.clone().chain(asked.rev()) {
            let id = names.id(&name);
            let next = first.len() as u32;
            let expected = *first.entry(name.clone()).or_insert(next);
            assert_eq!(id, expected, "{name}");
            assert_eq!(names.get(id), name);
        }
    }

    #[test]
    fn rows_written_out_come_back_in_order() {
        let mut rows = Rows::default();
        let row = |i: usize| Row {
            setup: i as u32 % 7,
            source: 1,
            test: 2,
            line: i as u32,
            size: 1 << (i % 24),
            metric: (i % 2) as u8,
            value: i as f64 / 3.0,
        };
        let n = SPILL_ROWS * 2 + 5;
        for i in 0..n {
            rows.push(row(i));
        }
        assert!(rows.spilled.is_some() && rows.held.len() < SPILL_ROWS);
        let mut back = Vec::new();
        rows.for_each(|r| back.push(r)).unwrap();
        assert_eq!(back.len(), n);
        assert!(back.iter().enumerate().all(|(i, r)| *r == row(i)));
    }
}

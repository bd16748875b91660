//! Reading and parsing files on several threads while the store sees them in the files' order,
//! so an import stores, counts and reports the same whatever the thread count.
//!
//! Workers take file indices in order and run at most [`WINDOW_PER_JOB`] × jobs files ahead of
//! the file the consumer waits for: a slow large file holds back the others' results, never lets
//! them pile up, so memory stays bounded by the window's files.

use crate::ingest::{self, FileResult};
use anyhow::{Context, Result};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Condvar, Mutex};

/// How many files per worker may be parsed ahead of the one the store writer takes next.
const WINDOW_PER_JOB: usize = 2;

/// Reads and parses one file, then hands (its path as reported, its size, what it held) to
/// `prepare` on the same thread.
fn read_and_parse<T>(
    path: &PathBuf,
    prepare: &(impl Fn(String, usize, FileResult) -> T + Sync),
) -> Result<T> {
    let source = path.display().to_string();
    let bytes = std::fs::read(path).with_context(|| format!("{source}: cannot read"))?;
    let result = ingest::parse_bytes(&source, &bytes);
    Ok(prepare(source, bytes.len(), result))
}

/// The number of worker threads for `jobs` (0: one per available core).
pub fn threads(jobs: usize) -> usize {
    match jobs {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
}

/// Parses `files` on `jobs` threads, runs `prepare` on each result on the thread that parsed it
/// (what can be done per file, and dropping what is not kept, costs the store writer nothing),
/// and hands each to `take` in the files' order. The first error (a file that cannot be read,
/// or one `take` returns) stops the workers and is returned.
pub fn parse_in_order<T: Send>(
    files: &[PathBuf],
    jobs: usize,
    prepare: impl Fn(String, usize, FileResult) -> T + Sync,
    mut take: impl FnMut(T) -> Result<()>,
) -> Result<()> {
    let jobs = threads(jobs).clamp(1, files.len().max(1));
    if jobs == 1 {
        // No thread to start for one file or one job.
        return files
            .iter()
            .try_for_each(|f| take(read_and_parse(f, &prepare)?));
    }
    let window = jobs * WINDOW_PER_JOB;
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    // The number of files the consumer has taken, and a wake-up for workers waiting on it.
    let taken = (Mutex::new(0usize), Condvar::new());
    let (tx, rx) = mpsc::sync_channel::<(usize, Result<T>)>(jobs);
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            let tx = tx.clone();
            let (next, stop, taken, prepare) = (&next, &stop, &taken, &prepare);
            scope.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                if i >= files.len() {
                    return;
                }
                {
                    let mut done = taken.0.lock().expect("import window lock");
                    while i >= *done + window && !stop.load(Ordering::SeqCst) {
                        done = taken.1.wait(done).expect("import window lock");
                    }
                }
                if stop.load(Ordering::SeqCst)
                    || tx.send((i, read_and_parse(&files[i], prepare))).is_err()
                {
                    return;
                }
            });
        }
        drop(tx);
        let result = consume(rx, &taken, &mut take);
        // Wake and stop any worker still waiting, whether the consumer finished or failed.
        stop.store(true, Ordering::SeqCst);
        taken.1.notify_all();
        result
    })
}

/// Takes the results in file order as they arrive.
fn consume<T>(
    rx: mpsc::Receiver<(usize, Result<T>)>,
    taken: &(Mutex<usize>, Condvar),
    take: &mut impl FnMut(T) -> Result<()>,
) -> Result<()> {
    let mut waiting = BTreeMap::new();
    let mut want = 0;
    for (i, parsed) in rx {
        waiting.insert(i, parsed);
        while let Some(parsed) = waiting.remove(&want) {
            take(parsed?)?;
            want += 1;
            *taken.0.lock().expect("import window lock") = want;
            taken.1.notify_all();
        }
    }
    Ok(())
}

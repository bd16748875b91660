//! Reading and parsing files on several threads while the store sees them in the files' order,
//! so an import stores, counts and reports the same whatever the thread count.
//!
//! Workers take file indices in order and run at most [`WINDOW_PER_JOB`] × jobs files ahead of
//! the file the consumer waits for: a slow large file holds back the others' results, never lets
//! them pile up, so memory stays bounded by the window's files. A large file is read in pieces
//! ([`ingest::stream`]): its first pass runs on a worker like any file, then its pieces are
//! parsed on every core, in the same window, and handed over in order.

use crate::ingest::stream::{self, Plan};
use crate::ingest::{self, FileResult};
use anyhow::{Context, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Condvar, Mutex};

/// How many files per worker may be parsed ahead of the one the store writer takes next.
const WINDOW_PER_JOB: usize = 2;

/// Which part of its file a result is.
#[derive(Debug, Clone, Copy)]
pub enum Part<'a> {
    /// The file, read whole.
    Whole,
    /// Piece `index` of `count` of the file at `path`, read in pieces.
    Piece {
        index: usize,
        count: usize,
        path: &'a Path,
    },
}

/// What a worker made of one file.
enum Read<T> {
    Whole(T),
    /// A large file's first pass: its pieces are parsed next.
    InPieces {
        source: String,
        path: PathBuf,
        plan: Plan,
    },
}

/// Reads and parses one file, then hands (its path as reported, its size, what it held) to
/// `prepare` on the same thread.
pub fn read_and_parse<T>(
    path: &Path,
    prepare: &(impl Fn(String, usize, FileResult) -> T + Sync),
) -> Result<T> {
    let source = path.display().to_string();
    let bytes = std::fs::read(path).with_context(|| format!("{source}: cannot read"))?;
    Ok(parse(source, &bytes, prepare))
}

fn parse<T>(
    source: String,
    bytes: &[u8],
    prepare: &(impl Fn(String, usize, FileResult) -> T + Sync),
) -> T {
    let result = ingest::parse_bytes(&source, bytes);
    prepare(source, bytes.len(), result)
}

/// Reads a file whole, or plans reading it in pieces when it is large.
fn read_or_plan<T>(
    path: &Path,
    sizes: stream::Sizes,
    prepare: &(impl Fn(String, usize, FileResult) -> T + Sync),
) -> Result<Read<T>> {
    let source = path.display().to_string();
    let cannot = || format!("{source}: cannot read");
    // One open and one stat per file: a tree of many small logs costs its system calls.
    let mut file = std::fs::File::open(path).with_context(cannot)?;
    let size = file.metadata().with_context(cannot)?.len();
    if size >= sizes.from {
        if let Some(plan) = stream::plan(&source, path, sizes.piece).with_context(cannot)? {
            let path = path.to_path_buf();
            return Ok(Read::InPieces { source, path, plan });
        }
    }
    let mut bytes = Vec::with_capacity(size as usize + 1);
    std::io::Read::read_to_end(&mut file, &mut bytes).with_context(cannot)?;
    drop(file);
    Ok(Read::Whole(parse(source, &bytes, prepare)))
}

/// Reads and parses one piece of a planned file, then hands it to `prepare`.
fn read_piece<T>(
    source: &str,
    path: &Path,
    plan: &Plan,
    piece: &stream::Piece,
    prepare: &(impl Fn(String, usize, FileResult) -> T + Sync),
) -> Result<T> {
    let bytes = stream::read_piece(path, piece).with_context(|| format!("{source}: cannot read"))?;
    let result = stream::parse_piece(source, &bytes, piece, &plan.facts);
    let size = (piece.bytes.end - piece.bytes.start) as usize;
    Ok(prepare(source.to_string(), size, result))
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
/// and hands each to `take` in the files' order, a large file's pieces one after another. The
/// first error (a file that cannot be read, or one `take` returns) stops the workers and is
/// returned.
pub fn parse_in_order<T: Send>(
    files: &[PathBuf],
    jobs: usize,
    sizes: stream::Sizes,
    prepare: impl Fn(String, usize, FileResult) -> T + Sync,
    mut take: impl FnMut(T, Part) -> Result<()>,
) -> Result<()> {
    let prepare = &prepare;
    in_order(
        files,
        jobs,
        |path| read_or_plan(path, sizes, prepare),
        |read| match read {
            Read::Whole(t) => take(t, Part::Whole),
            Read::InPieces { source, path, plan } => {
                let count = plan.pieces.len();
                let mut index = 0;
                in_order(
                    &plan.pieces,
                    jobs,
                    |piece| read_piece(&source, &path, &plan, piece, prepare),
                    |t| {
                        let part = Part::Piece {
                            index,
                            count,
                            path: &path,
                        };
                        index += 1;
                        take(t, part)
                    },
                )
            }
        },
    )
}

/// Runs `work` over `items` on `jobs` threads and hands the results to `take` in the items'
/// order, at most a window of items ahead.
fn in_order<I: Sync, T: Send>(
    items: &[I],
    jobs: usize,
    work: impl Fn(&I) -> Result<T> + Sync,
    mut take: impl FnMut(T) -> Result<()>,
) -> Result<()> {
    let jobs = threads(jobs).clamp(1, items.len().max(1));
    if jobs == 1 {
        // No thread to start for one item or one job.
        return items.iter().try_for_each(|item| take(work(item)?));
    }
    let window = jobs * WINDOW_PER_JOB;
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    // How far the consumer is, and a wake-up for workers waiting on it.
    let taken = Window::default();
    // Room for the whole window: a worker never blocks on sending, only on the window.
    let (tx, rx) = mpsc::sync_channel::<(usize, Result<T>)>(window);
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            let tx = tx.clone();
            let (next, stop, taken, work) = (&next, &stop, &taken, &work);
            scope.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                if i >= items.len() {
                    return;
                }
                taken.wait_for((i + 1).saturating_sub(window), stop);
                if stop.load(Ordering::SeqCst)
                    || tx.send((i, work(&items[i]))).is_err()
                {
                    return;
                }
            });
        }
        drop(tx);
        let result = consume(rx, &taken, &mut take);
        // Wake and stop any worker still waiting, whether the consumer finished or failed
        // (under the lock, so no worker checks `stop` and then sleeps through the wake-up).
        taken.stop(&stop);
        result
    })
}

/// How many items the consumer has taken, for workers that may not run too far ahead. A worker
/// inside the window reads one atomic; only one outside it locks and sleeps, and the consumer
/// makes the wake-up system call only when one sleeps (a per-item futex call cost more than a
/// small file's parse on two cores).
#[derive(Default)]
struct Window {
    taken: AtomicUsize,
    sleeping: AtomicUsize,
    lock: Mutex<()>,
    wake: Condvar,
}

impl Window {
    /// Returns once `at_least` items are taken, or `stop` is set.
    fn wait_for(&self, at_least: usize, stop: &AtomicBool) {
        if self.taken.load(Ordering::SeqCst) >= at_least {
            return;
        }
        let mut guard = self.lock.lock().expect("import window lock");
        self.sleeping.fetch_add(1, Ordering::SeqCst);
        // Checked after announcing the sleep: the consumer then sees the sleeper, or this sees
        // its progress (both orders are sequentially consistent).
        while self.taken.load(Ordering::SeqCst) < at_least && !stop.load(Ordering::SeqCst) {
            guard = self.wake.wait(guard).expect("import window lock");
        }
        self.sleeping.fetch_sub(1, Ordering::SeqCst);
    }

    /// Records that `n` items are taken, waking the workers that sleep on it.
    fn set_taken(&self, n: usize) {
        self.taken.store(n, Ordering::SeqCst);
        self.wake_sleepers();
    }

    /// Stops every worker, sleeping or not.
    fn stop(&self, stop: &AtomicBool) {
        stop.store(true, Ordering::SeqCst);
        self.wake_sleepers();
    }

    fn wake_sleepers(&self) {
        if self.sleeping.load(Ordering::SeqCst) > 0 {
            // Taking the lock waits for a sleeper between its check and its wait.
            drop(self.lock.lock().expect("import window lock"));
            self.wake.notify_all();
        }
    }
}

/// Takes the results in file order as they arrive.
fn consume<T>(
    rx: mpsc::Receiver<(usize, Result<T>)>,
    taken: &Window,
    take: &mut impl FnMut(T) -> Result<()>,
) -> Result<()> {
    let mut waiting = BTreeMap::new();
    let mut want = 0;
    for (i, parsed) in rx {
        waiting.insert(i, parsed);
        while let Some(parsed) = waiting.remove(&want) {
            take(parsed?)?;
            want += 1;
            taken.set_taken(want);
        }
    }
    Ok(())
}

//! Reading and parsing files on several threads while the store sees them in the files' order,
//! so an import stores, counts and reports the same whatever the thread count.
//!
//! Workers take files in order (a few consecutive ones as one item when there are many:
//! [`FILES_PER_ITEM`]) and run at most [`WINDOW_PER_JOB`] × jobs items ahead of the one the
//! consumer waits for, and stop claiming while the files parsed and not yet taken
//! hold [`BYTES_PER_JOB`] × jobs of text: a slow large file holds back the others' results,
//! never lets them pile up, so memory stays bounded by the window. The window is wide in files
//! and narrow in bytes because a wake-up costs more than a small file's parse: with a few files
//! in it, a thread slept and was woken every few files. The consumer is one of the workers: it
//! parses while the file it hands over next is not ready. A large file is read in pieces
//! ([`ingest::stream`]): its first pass runs on a worker like any file, then its pieces are
//! parsed on every core, in the same window, and handed over in order.

use super::open_in_dir::Opener;
use crate::ingest::stream::{self, Plan};
use crate::ingest::{self, draft, FileResult};
use anyhow::{Context, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Condvar, Mutex};

/// How many items per worker may be parsed ahead of the one the store writer takes next.
const WINDOW_PER_JOB: usize = 64;

/// How many bytes of text per worker may wait parsed for the store writer before workers stop
/// claiming (the file the writer needs next is always claimed): eight 256 KiB pieces of a large
/// file, or a few hundred small files.
const BYTES_PER_JOB: usize = 2 << 20;

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
    /// The file, read whole, and its size.
    Whole(T, usize),
    /// A large file's first pass: its pieces are parsed next.
    InPieces {
        source: String,
        path: PathBuf,
        plan: Plan,
    },
}

/// A file's path as its runs and problems name it: as `Path::display` writes it, copied as it
/// is when it is UTF-8 (`display` formats it through a UTF-8 check of its own, once a file).
fn source_name(path: &Path) -> String {
    path.to_str()
        .map_or_else(|| path.display().to_string(), str::to_owned)
}

/// Reads and parses one file, then hands (its path as reported, its size, what it held, `true`:
/// the whole file) to `prepare` on the same thread.
pub fn read_and_parse<T>(
    path: &Path,
    prepare: &(impl Fn(String, usize, FileResult, bool) -> T + Sync),
) -> Result<T> {
    let source = source_name(path);
    let bytes = std::fs::read(path).with_context(|| format!("{source}: cannot read"))?;
    Ok(parse(source, &bytes, prepare))
}

fn parse<T>(
    source: String,
    bytes: &[u8],
    prepare: &(impl Fn(String, usize, FileResult, bool) -> T + Sync),
) -> T {
    let result = ingest::parse_bytes(&source, bytes);
    prepare(source, bytes.len(), result, true)
}

/// How many consecutive files make one item of work when there are many: the ids of their
/// runs are hashed together ([`draft::give_ids`]: a small file's one run leaves a lane of the
/// hash idle), as many files as the hash has lanes. Twice as many filled the lanes better but
/// made each item twice as long: two threads over the iperf/qperf corpus waited longer for
/// the last items (104 ms against 101).
const FILES_PER_ITEM: usize = draft::MOST_LANES;

/// Whether `files` on `threads` threads are read in groups of [`FILES_PER_ITEM`]: when each
/// thread gets at least two groups; a few large files each keep a core.
fn in_groups(files: usize, threads: usize) -> bool {
    files >= 2 * FILES_PER_ITEM * threads
}

/// Reads and parses consecutive files and hands each file's result to `prepare` once its runs
/// have their ids; a large file is planned, to be read in pieces. The last texts to hash of
/// consecutive files wait until they fill the hash's lanes twice over, and are hashed together
/// ([`draft::give_ids`]): a file's few runs alone left most lanes idle (a small log has one).
/// A file that cannot be read is an error in its place.
fn read_files<T>(
    paths: &[PathBuf],
    sizes: stream::Sizes,
    threads: usize,
    prepare: &(impl Fn(String, usize, FileResult, bool) -> T + Sync),
) -> Vec<Result<Read<T>>> {
    let mut out: Vec<Option<Result<Read<T>>>> = Vec::with_capacity(paths.len());
    let mut waiting = Vec::new();
    let mut texts = 0;
    let mut opener = Opener::default();
    for path in paths {
        let read = match read_or_plan(&mut opener, path, sizes, threads) {
            Ok(Unprepared::Whole {
                source,
                size,
                result,
                unhashed,
            }) => {
                texts += unhashed.len();
                waiting.push((out.len(), source, size, result, unhashed));
                None
            }
            Ok(Unprepared::InPieces { source, path, plan }) => {
                Some(Ok(Read::InPieces { source, path, plan }))
            }
            Err(e) => Some(Err(e)),
        };
        out.push(read);
        if texts >= 2 * draft::MOST_LANES {
            hash_and_prepare(&mut waiting, &mut out, prepare);
            texts = 0;
        }
    }
    hash_and_prepare(&mut waiting, &mut out, prepare);
    out.into_iter()
        .map(|r| r.expect("every file of the group read"))
        .collect()
}

/// Hashes the last texts of the `waiting` files' runs together, then hands each file to
/// `prepare` into its place in `out`.
fn hash_and_prepare<T>(
    waiting: &mut Vec<(usize, String, usize, FileResult, draft::Unhashed)>,
    out: &mut [Option<Result<Read<T>>>],
    prepare: &(impl Fn(String, usize, FileResult, bool) -> T + Sync),
) {
    draft::give_ids(
        waiting
            .iter_mut()
            .map(|(_, _, _, r, u)| (&mut r.runs[..], std::mem::take(u))),
    );
    for (i, source, size, result, _) in waiting.drain(..) {
        out[i] = Some(Ok(Read::Whole(prepare(source, size, result, true), size)));
    }
}

/// A file read whole and parsed, its last runs' ids still to give, or planned in pieces.
enum Unprepared {
    Whole {
        source: String,
        size: usize,
        result: FileResult,
        unhashed: draft::Unhashed,
    },
    InPieces {
        source: String,
        path: PathBuf,
        plan: Plan,
    },
}

/// Reads a file whole, or plans reading it in pieces when it is large.
fn read_or_plan(
    opener: &mut Opener,
    path: &Path,
    sizes: stream::Sizes,
    threads: usize,
) -> Result<Unprepared> {
    let source = source_name(path);
    let cannot = || format!("{source}: cannot read");
    // One open and one stat per file: a tree of many small logs costs its system calls.
    let mut file = opener.open(path).with_context(cannot)?;
    let size = file.metadata().with_context(cannot)?.len();
    if size >= sizes.from {
        if let Some(plan) = stream::plan(&source, path, sizes.piece, threads).with_context(cannot)? {
            let path = path.to_path_buf();
            return Ok(Unprepared::InPieces { source, path, plan });
        }
    }
    let mut bytes = Vec::with_capacity(size as usize);
    // The file as it was when opened: its size then, through `Take`. `File`'s own `read_to_end`
    // asks the size again (a stat and a seek per file), and reading on to the end costs one
    // more read per file, which returns nothing unless the file grew meanwhile.
    std::io::Read::read_to_end(&mut std::io::Read::take(&mut file, size), &mut bytes)
        .with_context(cannot)?;
    drop(file);
    let (result, unhashed) = ingest::parse_bytes_unhashed(&source, &bytes);
    Ok(Unprepared::Whole {
        source,
        size: bytes.len(),
        result,
        unhashed,
    })
}

/// Reads and parses one piece of a planned file, then hands it to `prepare`.
fn read_piece<T>(
    source: &str,
    path: &Path,
    plan: &Plan,
    piece: &stream::Piece,
    prepare: &(impl Fn(String, usize, FileResult, bool) -> T + Sync),
) -> Result<T> {
    let bytes = stream::read_piece(path, piece).with_context(|| format!("{source}: cannot read"))?;
    let result = stream::parse_piece(source, &bytes, piece, &plan.facts);
    let size = (piece.bytes.end - piece.bytes.start) as usize;
    Ok(prepare(source.to_string(), size, result, false))
}

/// The number of worker threads for `jobs` (0: one per available core).
pub fn threads(jobs: usize) -> usize {
    match jobs {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
}

/// Parses `files` on `jobs` threads, runs `prepare` on each result on the thread that parsed it
/// (what can be done per file, and dropping what is not kept, costs the store writer nothing;
/// its last argument says whether the result is a whole file or one piece of a large one),
/// and hands each to `take` in the files' order, a large file's pieces one after another. The
/// first error (a file that cannot be read, or one `take` returns) stops the workers and is
/// returned.
pub fn parse_in_order<T: Send>(
    files: &[PathBuf],
    jobs: usize,
    sizes: stream::Sizes,
    prepare: impl Fn(String, usize, FileResult, bool) -> T + Sync,
    mut take: impl FnMut(T, Part) -> Result<()>,
) -> Result<()> {
    let prepare = &prepare;
    // A large file's first pass uses every core: its pieces wait for it. (Asked once: the
    // answer reads cgroup files.)
    let first_pass_threads = threads(jobs);
    let per_item = if in_groups(files.len(), first_pass_threads) {
        FILES_PER_ITEM
    } else {
        1
    };
    let groups: Vec<&[PathBuf]> = files.chunks(per_item).collect();
    in_order(
        &groups,
        jobs,
        |paths| Ok(read_files(paths, sizes, first_pass_threads, prepare)),
        // A plan weighs nothing: its pieces are weighed as they are parsed.
        |_, reads| {
            reads
                .iter()
                .map(|read| match read {
                    Ok(Read::Whole(_, size)) => *size,
                    _ => 0,
                })
                .sum()
        },
        |reads| {
            for read in reads {
                match read? {
                    Read::Whole(t, _) => take(t, Part::Whole)?,
                    Read::InPieces { source, path, plan } => {
                        let count = plan.pieces.len();
                        let mut index = 0;
                        in_order(
                            &plan.pieces,
                            jobs,
                            |piece| read_piece(&source, &path, &plan, piece, prepare),
                            |piece, _| (piece.bytes.end - piece.bytes.start) as usize,
                            |t| {
                                let part = Part::Piece {
                                    index,
                                    count,
                                    path: &path,
                                };
                                index += 1;
                                take(t, part)
                            },
                        )?
                    }
                }
            }
            Ok(())
        },
    )
}

/// Runs `work` over `items` on `jobs` threads and hands the results to `take` in the items'
/// order, at most a window of items ahead, and of `weight` (bytes of text) waiting.
fn in_order<I: Sync, T: Send>(
    items: &[I],
    jobs: usize,
    work: impl Fn(&I) -> Result<T> + Sync,
    weight: impl Fn(&I, &T) -> usize + Sync,
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
    let taken = Window::new(jobs * BYTES_PER_JOB);
    let weighed = |i: usize| {
        let parsed = work(&items[i]);
        let w = parsed.as_ref().map_or(0, |t| weight(&items[i], t));
        taken.add_waiting(w);
        (parsed, w)
    };
    // Room for the whole window: a worker never blocks on sending, only on the window.
    let (tx, rx) = mpsc::sync_channel::<(usize, (Result<T>, usize))>(window);
    std::thread::scope(|scope| {
        // The calling thread is the last worker: it parses whenever the item it hands over
        // next is not ready, so it sleeps (and is woken) only when there is nothing to claim.
        for _ in 1..jobs {
            let tx = tx.clone();
            let (next, stop, taken, weighed) = (&next, &stop, &taken, &weighed);
            scope.spawn(move || {
                // Opens and closes here do not wait on the other threads' (a worker only
                // reads its own files, and ends with the import).
                super::fd_table::own();
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    if i >= items.len() {
                        return;
                    }
                    taken.wait_for(i, window, stop);
                    if stop.load(Ordering::SeqCst) || tx.send((i, weighed(i))).is_err() {
                        return;
                    }
                }
            });
        }
        drop(tx);
        // Past the window only once every worker is gone (then nobody else parses); past the
        // bytes only for the item it takes next.
        let claim = |workers_gone: bool| {
            let limit = if workers_gone { usize::MAX } else { taken.end(window) };
            claim_within(&next, items.len(), limit)
        };
        let result = consume(rx, &taken, claim, weighed, &mut take);
        // Wake and stop any worker still waiting, whether the consumer finished or failed
        // (under the lock, so no worker checks `stop` and then sleeps through the wake-up).
        taken.stop(&stop);
        result
    })
}

/// Claims the next item for the calling thread if there is one before `limit` (the end of
/// the window: the consumer must never wait for the window to move, as only it moves it).
fn claim_within(next: &AtomicUsize, count: usize, limit: usize) -> Option<usize> {
    next.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |i| {
        (i < count.min(limit)).then_some(i + 1)
    })
    .ok()
}

/// How many items the consumer has taken and how many bytes wait parsed, for workers that may
/// not run too far ahead. A worker inside the window reads two atomics; only one outside it
/// locks and sleeps, and the consumer makes the wake-up system call only when one sleeps (a
/// per-item futex call cost more than a small file's parse on two cores).
struct Window {
    taken: AtomicUsize,
    /// Bytes of the items parsed and not yet taken, and how many may be.
    waiting: AtomicUsize,
    budget: usize,
    sleeping: AtomicUsize,
    lock: Mutex<()>,
    wake: Condvar,
}

impl Window {
    fn new(budget: usize) -> Window {
        Window {
            taken: AtomicUsize::new(0),
            waiting: AtomicUsize::new(0),
            budget,
            sleeping: AtomicUsize::new(0),
            lock: Mutex::new(()),
            wake: Condvar::new(),
        }
    }

    /// One past the last item that may be parsed now: the window of `window` items after the
    /// last taken, or only the item taken next while the bytes waiting fill the budget.
    fn end(&self, window: usize) -> usize {
        let taken = self.taken.load(Ordering::SeqCst);
        if self.full() {
            taken + 1
        } else {
            taken + window
        }
    }

    fn admits(&self, i: usize, window: usize) -> bool {
        i < self.end(window)
    }

    /// Returns once item `i` may be parsed ([`Window::admits`]), or `stop` is set.
    fn wait_for(&self, i: usize, window: usize, stop: &AtomicBool) {
        if self.admits(i, window) {
            return;
        }
        let mut guard = self.lock.lock().expect("import window lock");
        self.sleeping.fetch_add(1, Ordering::SeqCst);
        // Checked after announcing the sleep: the consumer then sees the sleeper, or this sees
        // its progress (both orders are sequentially consistent).
        while !self.admits(i, window) && !stop.load(Ordering::SeqCst) {
            guard = self.wake.wait(guard).expect("import window lock");
        }
        self.sleeping.fetch_sub(1, Ordering::SeqCst);
    }

    /// Whether the bytes waiting fill the budget.
    fn full(&self) -> bool {
        self.waiting.load(Ordering::SeqCst) >= self.budget
    }

    fn add_waiting(&self, bytes: usize) {
        self.waiting.fetch_add(bytes, Ordering::SeqCst);
    }

    /// Records that `n` items are taken, the last of `bytes`, waking the workers that sleep on
    /// it.
    fn set_taken(&self, n: usize, bytes: usize) {
        self.waiting.fetch_sub(bytes, Ordering::SeqCst);
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

/// Takes the results in file order as they arrive; while the next one is not there, parses
/// the items it can `claim` itself.
fn consume<T>(
    rx: mpsc::Receiver<(usize, (Result<T>, usize))>,
    taken: &Window,
    claim: impl Fn(bool) -> Option<usize>,
    work: impl Fn(usize) -> (Result<T>, usize),
    take: &mut impl FnMut(T) -> Result<()>,
) -> Result<()> {
    let mut waiting = BTreeMap::new();
    let mut want = 0;
    loop {
        while let Some((parsed, bytes)) = waiting.remove(&want) {
            take(parsed?)?;
            want += 1;
            taken.set_taken(want, bytes);
        }
        if let Ok((i, parsed)) = rx.try_recv() {
            waiting.insert(i, parsed);
        } else if let Some(i) = claim(false) {
            waiting.insert(i, work(i));
        } else if let Ok((i, parsed)) = rx.recv() {
            waiting.insert(i, parsed);
        } else if let Some(i) = claim(true) {
            // Every worker is done (each sent what it claimed): the rest is this thread's.
            waiting.insert(i, work(i));
        } else if waiting.is_empty() {
            return Ok(());
        } else {
            anyhow::bail!("import: the result of item {want} never arrived");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Items handed over by `in_order` on `jobs` threads, stopping at an error.
    fn run(count: usize, jobs: usize, fail_at: Option<usize>) -> (Vec<usize>, Result<()>) {
        let items: Vec<usize> = (0..count).collect();
        let mut seen = Vec::new();
        let result = in_order(
            &items,
            jobs,
            |&i| match fail_at {
                Some(f) if i == f => anyhow::bail!("item {i} fails"),
                // Uneven work, so results arrive out of order.
                _ => Ok((0..(i % 7) * 1000).fold(i, |a, b| a.wrapping_add(b))),
            },
            // 0 to 4 MiB: the bytes waiting fill the budget often, some items on their own.
            |&i, _| (i % 5) << 20,
            |v| {
                seen.push(v);
                Ok(())
            },
        );
        (seen, result)
    }

    #[test]
    fn results_come_in_item_order_whatever_the_threads() {
        let (one, r) = run(2000, 1, None);
        assert!(r.is_ok());
        for jobs in [2, 3, 8] {
            let (many, r) = run(2000, jobs, None);
            assert!(r.is_ok(), "{jobs} jobs");
            assert_eq!(many, one, "{jobs} jobs");
        }
        // More threads than items, and no items at all.
        assert_eq!(run(3, 8, None).0.len(), 3);
        assert_eq!(run(0, 4, None).0.len(), 0);
    }

    /// Every file of fixtures/, in groups (as many files as that make groups) on one thread
    /// and on three: each run has the id a read of its file alone gives it, and a file that
    /// cannot be read stops the hand-over at its place inside its group.
    #[test]
    fn files_read_in_groups_give_each_run_its_own_id() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut files = crate::pipeline::collect_files(&[root.join("fixtures")]).unwrap();
        assert!(in_groups(files.len(), 3), "{} files: too few to group", files.len());
        let alone: Vec<(String, Vec<String>)> = files
            .iter()
            .map(|f| {
                let source = f.display().to_string();
                let r = ingest::parse_bytes(&source, &std::fs::read(f).unwrap());
                (source, r.runs.into_iter().map(|r| r.run_id).collect())
            })
            .collect();
        assert!(alone.iter().filter(|(_, ids)| !ids.is_empty()).count() > 100);
        let sizes = stream::Sizes {
            from: u64::MAX,
            piece: 1 << 20,
        };
        let ids = |r: FileResult| r.runs.into_iter().map(|r| r.run_id).collect::<Vec<_>>();
        for jobs in [1, 3] {
            let mut grouped = Vec::new();
            parse_in_order(
                &files,
                jobs,
                sizes,
                |source, _, r, _| (source, ids(r)),
                |t, _| {
                    grouped.push(t);
                    Ok(())
                },
            )
            .unwrap();
            assert_eq!(grouped, alone, "{jobs} threads");
        }
        // The third file of a group cannot be read: the two before it are handed over.
        let at = 3 * FILES_PER_ITEM + 2;
        files[at] = root.join("fixtures/no-such-file.txt");
        let mut seen = 0;
        let err = parse_in_order(&files, 2, sizes, |_, _, _, _| (), |_, _| {
            seen += 1;
            Ok(())
        });
        assert!(err.unwrap_err().to_string().contains("no-such-file.txt: cannot read"));
        assert_eq!(seen, at);
    }

    #[test]
    fn an_error_stops_the_hand_over_at_its_item() {
        for jobs in [1, 2, 4] {
            let (seen, r) = run(1000, jobs, Some(321));
            assert_eq!(r.unwrap_err().to_string(), "item 321 fails");
            assert_eq!(seen.len(), 321, "{jobs} jobs");
        }
    }

    /// A file's name for its runs is what `Path::display` writes, UTF-8 or not.
    #[test]
    fn source_name_is_the_displayed_path() {
        use std::os::unix::ffi::OsStrExt;
        let names: [&[u8]; 5] = [b"logs/a.txt", b"", b"./x/../y", "é/ü".as_bytes(), b"bad\xff\xfe.txt"];
        for name in names {
            let path = Path::new(std::ffi::OsStr::from_bytes(name));
            assert_eq!(source_name(path), path.display().to_string(), "{name:?}");
        }
    }
}

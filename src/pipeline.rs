//! The one import pipeline, used by `linkperf import` and `linkperf run`: read and parse the
//! files on every core ([`parallel`]), attach the labels, and hand each file's runs to one store
//! transaction in the files' order as they are read (memory stays bounded by a window of files).
//! What could not be read is collected, never dropped.

use crate::benchlog::write::Rendered;
use crate::counters;
use crate::ingest::{self, Problem};
use crate::model::{CommandLine, Run};
use crate::normalize::platform;
use crate::store::{AddOutcome, Store};
use crate::verbs::record::SessionInfo;
use anyhow::Result;
use std::borrow::Cow;
use std::collections::{BTreeMap, HashSet};
use parallel::Part;
use std::path::{Path, PathBuf};
pub use listing::{collect_files, collect_inputs, Inputs};
use tally::{Checks, Pieces, Prepared, Tally};

/// When the parsed runs reach the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Each file's runs are written as they are read; one commit at the end.
    Store,
    /// Nothing is written unless the whole input parsed without a problem.
    Strict,
    /// Parse and count only.
    DryRun,
}

pub struct Options<'a> {
    pub labels: &'a BTreeMap<String, String>,
    pub mode: Mode,
    /// Threads that read and parse files (0: one per core). The store sees the files in the
    /// order given whatever the count, so the result does not depend on it.
    pub jobs: usize,
    /// Plausibility and placement findings ([`crate::check`]) over each file's runs, with
    /// platforms resolved by this project file; `None` checks nothing.
    pub check: Option<&'a crate::config::Config>,
    /// Labels for the runs of particular files (by path as given), on top of `labels`.
    pub file_labels: Option<&'a std::collections::HashMap<String, BTreeMap<String, String>>>,
    /// When a large file is read in pieces, so memory follows its largest block rather than
    /// the file ([`ingest::stream`]); the result is the same either way.
    pub stream: ingest::stream::Sizes,
    /// Directories whose files are all among those imported ([`Inputs::listed`]): a log there
    /// has a counters file only if the files hold it, so none is looked for (an open that fails,
    /// per file of a large tree). `None` looks beside every log.
    pub listed_dirs: Option<&'a HashSet<PathBuf>>,
    /// Called after the batch is written and before it is published. A test-only seam: the
    /// crash test passes a hook that aborts the process there, as a killed import would die.
    pub before_commit: Option<fn()>,
}

/// What an import read, and what the store took.
#[derive(Debug, Default)]
pub struct Imported {
    pub files: usize,
    pub bytes: usize,
    pub runs: usize,
    pub rows: usize,
    /// `file:line: tool test failed: first error line`, per failed run.
    pub failed: Vec<String>,
    pub problems: Vec<Problem>,
    /// What `linkperf check` would say of the runs read, file by file.
    pub findings: Vec<crate::check::Finding>,
    pub unreadable_blocks: usize,
    /// Each file that yielded no run, and why.
    pub nothing: Vec<(String, ingest::Nothing)>,
    /// `None` under `--dry-run`, or under `--strict` when a problem kept everything out.
    pub stored: Option<AddOutcome>,
}

/// Imports `files` into the store at `store_dir` (see [`Mode`]).
pub fn import(store_dir: &Path, files: &[PathBuf], options: &Options) -> Result<Imported> {
    let (files, sidecars, sidecar_problems) = split_counters_files(files);
    // Whether a log may have a counters file: not when its directory was listed without one.
    let may_have_counters = |source: &str| {
        let log = Path::new(source);
        match (options.listed_dirs, directory_of(source)) {
            (Some(listed), Some(dir)) if listed.contains(dir) => {
                !sidecars.is_empty() && sidecars.contains(counters::sidecar_path(log).as_path())
            }
            _ => true,
        }
    };
    let files = &files[..];
    let mut tx = match options.mode {
        Mode::Store => Some(Store::open(store_dir, true)?.begin()?),
        Mode::Strict | Mode::DryRun => None,
    };
    let mut pending = Vec::new();
    let mut out = Imported {
        files: files.len(),
        problems: sidecar_problems,
        ..Imported::default()
    };
    let keep_runs = options.mode != Mode::DryRun;
    let prepare = |source: String, bytes: usize, mut result: ingest::FileResult, whole: bool| {
        let sidecar = if may_have_counters(&source) {
            read_counters(&source, &mut result.runs)
        } else {
            Vec::new()
        };
        let extra = options.file_labels.and_then(|m| m.get(&source));
        for r in &mut result.runs {
            r.labels
                .extend(options.labels.iter().map(|(k, v)| (k.clone(), v.clone())));
            if let Some(extra) = extra {
                r.labels
                    .extend(extra.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
        }
        let mut tally = Tally::of(&result.runs);
        if let Some(config) = options.check {
            let mut checker = crate::check::Checker::new(config);
            for r in &result.runs {
                checker.add(r, &platform::resolve_keys(r, config, platform::Keys::Checks));
            }
            // A whole file's checks end here: what they held is freed by the thread that
            // allocated it (a block freed by another thread costs both); a piece's wait for
            // the file's other pieces.
            tally.checks = if whole {
                Checks::Found(checker.finish())
            } else {
                Checks::Open(Box::new(checker))
            };
        }
        if !keep_runs {
            // Freed on the parsing thread, not by the one that collects.
            result.runs = Vec::new();
        }
        Prepared {
            source,
            bytes,
            result,
            tally,
            sidecar,
        }
    };
    let mut store_runs = |runs: Vec<Run>| -> Result<()> {
        match tx.as_mut() {
            Some(tx) => tx.add(runs)?,
            None if options.mode == Mode::Strict => pending.extend(runs),
            None => {}
        }
        Ok(())
    };
    // The large file being read in pieces, if any.
    let mut pieces: Option<Pieces> = None;
    parallel::parse_in_order(files, options.jobs, options.stream, prepare, |prepared, part| {
        let Part::Piece { index, count, path } = part else {
            return store_runs(out.add_whole(prepared));
        };
        let so_far = pieces.get_or_insert_with(Pieces::default);
        store_runs(so_far.add(prepared))?;
        if index + 1 < count {
            return Ok(());
        }
        let file = pieces.take().expect("pieces of this file");
        if file.runs() == 0 {
            // Nothing stored from it: a whole read says why a file yields nothing.
            return store_runs(out.add_whole(parallel::read_and_parse(path, &prepare)?));
        }
        file.finish(&mut out);
        Ok(())
    })?;
    let before_commit = options.before_commit.unwrap_or(|| {});
    out.stored = match (tx, options.mode) {
        (Some(tx), _) => Some(tx.commit_after(before_commit)?),
        (None, Mode::Strict) if out.problems.is_empty() => {
            let mut tx = Store::open(store_dir, true)?.begin()?;
            tx.add(pending)?;
            Some(tx.commit_after(before_commit)?)
        }
        (None, _) => None,
    };
    Ok(out)
}

/// The directory a log's path names, as `Path::parent` finds it for the path of a file (which
/// never ends in a separator, `.` or `..`): the text before the last `/`, `None` without one
/// (where `Path::parent` gives the empty path, which no listing lists). `Path::parent` takes
/// the path apart into components from the end, twice, for every file an import reads.
fn directory_of(source: &str) -> Option<&Path> {
    let (dir, _) = split_at_last_slash(source.as_bytes())?;
    // `dir` is the text before an ASCII `/` of `source` (or the `/` itself): whole characters.
    Some(Path::new(&source[..dir.len()]))
}

/// A path's bytes split at its last `/`: the directory (the `/` itself for a file at the root)
/// and the name after it; `None` without a `/`.
fn split_at_last_slash(path: &[u8]) -> Option<(&[u8], &[u8])> {
    let slash = memchr::memrchr(b'/', path)?;
    Some((&path[..slash.max(1)], &path[slash + 1..]))
}

/// The inputs split into logs and counters files, which are read with their logs
/// ([`read_counters`]); a counters file given without its log is a problem.
fn split_counters_files(files: &[PathBuf]) -> (Cow<'_, [PathBuf]>, HashSet<&Path>, Vec<Problem>) {
    if !files.iter().any(|f| counters::is_sidecar(f)) {
        // All of them are logs: no list of them and no copy of each path, on one core before
        // any file is parsed.
        return (Cow::Borrowed(files), HashSet::new(), Vec::new());
    }
    let (sidecars, logs): (Vec<&PathBuf>, Vec<&PathBuf>) =
        files.iter().partition(|f| counters::is_sidecar(f));
    let beside_logs: HashSet<PathBuf> = logs.iter().map(|f| counters::sidecar_path(f)).collect();
    let mut problems = Vec::new();
    for f in &sidecars {
        if !beside_logs.contains(*f) {
            problems.push(Problem::new(
                &f.display().to_string(),
                1,
                "a counters file is read with its log (the same name, ending .log): import the log"
                    .into(),
            ));
        }
    }
    let logs = logs.into_iter().cloned().collect();
    (Cow::Owned(logs), sidecars.into_iter().map(PathBuf::as_path).collect(), problems)
}

/// Gives the runs of `source` the counters that changed across them, from the counters file
/// beside it (see [`counters`]), if there is one; returns its unreadable lines as problems.
pub fn read_counters(source: &str, runs: &mut [Run]) -> Vec<Problem> {
    let path = counters::sidecar_path(Path::new(source));
    let Ok(bytes) = std::fs::read(&path) else {
        return Vec::new();
    };
    let name = path.display().to_string();
    let file = counters::read::parse(&String::from_utf8_lossy(&bytes));
    counters::delta::attach(&file, &name, runs);
    file.problems
        .iter()
        .map(|(line, why)| Problem::new(&name, *line, why.clone()))
        .collect()
}

/// The stored run of one `linkperf bench` test whose log block starts at 1-based line `first_line` of
/// `source`: the block read back through the log parser (so the run and an import of the log
/// are the same run), plus what only the running process knows — the latency samples, the
/// command line and the host.
pub fn bench_run(
    info: &SessionInfo,
    source: &str,
    first_line: u32,
    rendered: &Rendered,
) -> anyhow::Result<Run> {
    let mut text = rendered.lines.join("\n");
    text.push('\n');
    let mut parsed = ingest::parse_bytes(source, text.as_bytes());
    if !parsed.problems.is_empty() || parsed.runs.len() != 1 {
        let why: Vec<String> = parsed.problems.iter().map(|p| p.to_string()).collect();
        anyhow::bail!(
            "the bench log did not read back as one run ({} runs): {}",
            parsed.runs.len(),
            why.join("; ")
        );
    }
    let mut run = parsed.runs.remove(0);
    for (index, samples) in &rendered.samples {
        if let Some(m) = run
            .measurements
            .iter_mut()
            .find(|m| m.line as usize == index + 1)
        {
            m.samples_us = samples.clone();
        }
    }
    let shift = first_line.saturating_sub(1);
    run.line += shift;
    for m in &mut run.measurements {
        m.line += shift;
    }
    run.host = info.host.clone();
    run.command = Some(CommandLine {
        raw: info.argv.join(" "),
        wrappers: Vec::new(),
        program: "linkperf".into(),
        flags: BTreeMap::new(),
        peer: Some(info.peer.clone()),
        pipe: None,
    });
    Ok(run)
}

mod fd_table;
mod listing;
mod open_in_dir;
pub mod parallel;
mod tally;
#[cfg(test)]
mod tests;

//! What an import keeps of each file besides its runs, and how the pieces of a large file add up
//! to what a whole read of it would give (the same counts, findings and problems, in the same
//! order), while their runs go to the store piece by piece.

use super::Imported;
use crate::check::{Checker, Finding};
use crate::ingest::{self, Problem};
use crate::model::{Run, RunStatus};

/// What the summary says of one file's runs (or of one piece's).
pub struct Tally<'c> {
    pub runs: usize,
    pub rows: usize,
    /// `file:line: tool test failed: first error line`, per failed run.
    pub failed: Vec<String>,
    /// The plausibility rules over the runs, when the import checks them.
    pub checks: Checks<'c>,
}

/// The plausibility rules over a file's runs.
pub enum Checks<'c> {
    /// Not checked.
    None,
    /// A piece's rules, which take the file's other pieces before they find anything. Boxed:
    /// every file's result is moved from its worker to the store writer a few times, and a
    /// checker inline tripled what each move copied.
    Open(Box<Checker<'c>>),
    /// A whole file's findings.
    Found(Vec<Finding>),
}

impl<'c> Tally<'c> {
    pub fn of(runs: &[Run]) -> Tally<'c> {
        let failed = runs
            .iter()
            .filter(|r| r.status == RunStatus::Failed)
            .map(|r| {
                let error = r
                    .error
                    .as_deref()
                    .unwrap_or("")
                    .lines()
                    .next()
                    .unwrap_or("");
                format!(
                    "{}:{}: {} {} failed: {error}",
                    r.source, r.line, r.tool, r.test
                )
            })
            .collect();
        Tally {
            runs: runs.len(),
            rows: runs.iter().map(|r| r.measurements.len()).sum(),
            failed,
            checks: Checks::None,
        }
    }

    /// Takes the tally of the piece after this one.
    fn merge(&mut self, later: Tally<'c>) {
        self.runs += later.runs;
        self.rows += later.rows;
        self.failed.extend(later.failed);
        // Every piece of a file is checked, or none is.
        if let (Checks::Open(c), Checks::Open(l)) = (&mut self.checks, later.checks) {
            c.merge(*l);
        }
    }
}

/// One file (or piece) parsed and prepared on a worker: its runs, and what the summary keeps.
pub struct Prepared<'c> {
    pub source: String,
    pub bytes: usize,
    pub result: ingest::FileResult,
    pub tally: Tally<'c>,
    /// Problems of the counters file beside the log.
    pub sidecar: Vec<Problem>,
}

impl Imported {
    /// Counts a file read whole; returns its runs.
    pub(super) fn add_whole(&mut self, p: Prepared) -> Vec<Run> {
        self.bytes += p.bytes;
        self.add_tally(p.tally);
        self.problems.extend(p.result.problems);
        self.problems.extend(p.sidecar);
        self.nothing
            .extend(p.result.nothing.map(|why| (p.source.clone(), why)));
        self.unreadable_blocks += p.result.unreadable_blocks;
        p.result.runs
    }

    fn add_tally(&mut self, tally: Tally) {
        self.runs += tally.runs;
        self.rows += tally.rows;
        self.failed.extend(tally.failed);
        match tally.checks {
            Checks::None => {}
            Checks::Open(checker) => self.findings.extend((*checker).finish()),
            Checks::Found(found) => self.findings.extend(found),
        }
    }
}

/// The pieces of one file read so far.
#[derive(Default)]
pub struct Pieces<'c> {
    bytes: usize,
    /// What the pieces held but their runs, as one file's ([`ingest::FileResult::append_piece`]).
    read: ingest::FileResult,
    /// The counters file's problems, read with the first piece.
    sidecar: Option<Vec<Problem>>,
    tally: Option<Tally<'c>>,
}

impl<'c> Pieces<'c> {
    /// Takes the next piece; returns its runs.
    pub fn add(&mut self, p: Prepared<'c>) -> Vec<Run> {
        let mut result = p.result;
        let runs = std::mem::take(&mut result.runs);
        self.bytes += p.bytes;
        self.read.append_piece(result);
        self.sidecar.get_or_insert(p.sidecar);
        match &mut self.tally {
            Some(t) => t.merge(p.tally),
            None => self.tally = Some(p.tally),
        }
        runs
    }

    /// How many runs the pieces held.
    pub fn runs(&self) -> usize {
        self.tally.as_ref().map_or(0, |t| t.runs)
    }

    /// Counts the whole file in `out`, as a whole read would have.
    pub fn finish(self, out: &mut Imported) {
        out.bytes += self.bytes;
        out.unreadable_blocks += self.read.unreadable_blocks;
        out.problems.extend(self.read.problems);
        out.problems.extend(self.sidecar.unwrap_or_default());
        if let Some(t) = self.tally {
            out.add_tally(t);
        }
    }
}

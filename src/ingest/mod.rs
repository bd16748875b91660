//! Reading logs: decode a file ([`text`]), split it into command blocks ([`transcript`]), hand
//! each block to the parser of its tool ([`perftest`], ...) and turn the drafts into canonical
//! [`Run`]s. nom types never leave this module tree. Everything a parser cannot read becomes a
//! [`Problem`] with file and line.

pub mod adapter;
pub mod command;
pub mod common;
pub mod devinfo;
pub mod draft;
pub mod facts;
pub mod file_lines;
pub mod ibping;
pub mod iperf2;
pub mod iperf3;
pub mod perftest;
pub mod qperf;
pub mod stream;
pub mod sysfs;
pub mod text;
pub mod transcript;
pub mod udp_loss;

pub use draft::{content_ids, ContentHash, RunDraft};

use crate::model::Run;
use adapter::{Block, Parser};
use file_lines::FileLines;
use std::fmt;

/// Lines of real tool output for tests that check a hand-written reader against the regex it
/// replaced: every line holding `needle` in the files under these folders of the project
/// (folders that are not there, such as `../shared/` outside CI, are skipped).
#[cfg(test)]
pub(crate) fn fixture_lines_with(dirs: &[&str], needle: &str) -> Vec<String> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let dirs: Vec<std::path::PathBuf> = dirs
        .iter()
        .map(|d| root.join(d))
        .filter(|d| d.is_dir())
        .collect();
    let files = crate::pipeline::collect_files(&dirs).expect("fixture folders");
    let mut out = Vec::new();
    for file in files {
        let bytes = std::fs::read(&file).expect("fixture file");
        let text = String::from_utf8_lossy(&bytes);
        out.extend(
            text.lines()
                .filter(|l| l.contains(needle))
                .map(String::from),
        );
    }
    out
}

/// The fixture lines holding `needle`, each from every one of its words on: texts for a
/// reader of the columns that follow some other column.
#[cfg(test)]
pub(crate) fn fixture_tails_with(needle: &str) -> Vec<String> {
    let mut tails = Vec::new();
    for line in fixture_lines_with(&["fixtures"], needle) {
        let starts = line.char_indices().filter(|&(i, c)| {
            !c.is_whitespace() && (i == 0 || line[..i].ends_with(char::is_whitespace))
        });
        tails.extend(starts.map(|(i, _)| line[i..].to_string()));
    }
    tails
}

/// Something in an input that could not be read, with where and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub source: String,
    pub line: u32,
    pub message: String,
}

impl Problem {
    pub fn new(source: &str, line: u32, message: String) -> Problem {
        Problem {
            source: source.to_string(),
            line,
            message,
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.source, self.line, self.message)
    }
}

/// Everything read from one file.
#[derive(Debug, Default)]
pub struct FileResult {
    pub runs: Vec<Run>,
    /// Lines or blocks that could not be read.
    pub problems: Vec<Problem>,
    /// Blocks of a known tool that produced no run (counted as unreadable in the summary).
    pub unreadable_blocks: usize,
    pub encoding: Option<&'static str>,
    /// How many of the first `problems` are lines cut for their length ([`MAX_LINE_BYTES`]):
    /// a file read in pieces lists them first, as a whole read does.
    pub long_lines: usize,
    /// Why a file yielded no run at all (`None` when it yielded runs): see [`Nothing`].
    pub nothing: Option<Nothing>,
}

impl FileResult {
    /// Takes the result of the next piece of the same file ([`stream`]) as a whole read lists
    /// it: lines cut for their length first, then the other problems, each in file order.
    pub fn append_piece(&mut self, mut next: FileResult) {
        let rest = next.problems.split_off(next.long_lines);
        let at = self.long_lines;
        self.long_lines += next.problems.len();
        self.problems.splice(at..at, next.problems);
        self.problems.extend(rest);
        self.runs.append(&mut next.runs);
        self.unreadable_blocks += next.unreadable_blocks;
        self.encoding = self.encoding.or(next.encoding);
    }
}

/// Why a file yielded no run. Only [`Nothing::Unrecognised`] is a problem: a help text or a
/// version banner is tool output read correctly, with nothing to store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Nothing {
    /// Nothing in the file is any tool's output (a problem at line 1).
    Unrecognised,
    /// Blocks were read, and each reported its own problem.
    Problems,
    /// Only `--help` / usage text.
    HelpText,
    /// Only `--version` output.
    VersionBanner,
}

impl Nothing {
    pub fn as_str(self) -> &'static str {
        match self {
            Nothing::Unrecognised => "no tool output recognised",
            Nothing::Problems => "nothing readable (see its problems)",
            Nothing::HelpText => "only a usage/help text",
            Nothing::VersionBanner => "only a version banner",
        }
    }
}

/// Parses the bytes of one file. `source` is the path as it will be stored and reported.
pub fn parse_bytes(source: &str, bytes: &[u8]) -> FileResult {
    let (mut result, unhashed) = parse_bytes_unhashed(source, bytes);
    draft::give_ids([(&mut result.runs[..], unhashed)]);
    result
}

/// [`parse_bytes`], leaving the ids of the file's last runs to work out (with other files'
/// runs, by [`draft::give_ids`]): their `run_id` is empty until then.
pub fn parse_bytes_unhashed(source: &str, bytes: &[u8]) -> (FileResult, draft::Unhashed) {
    let mut result = FileResult::default();
    let decoded = match text::decode(bytes) {
        Ok(d) => d,
        Err(text::TextError::Empty) => {
            result
                .problems
                .push(Problem::new(source, 1, "empty file".into()));
            result.unreadable_blocks += 1;
            result.nothing = Some(Nothing::Problems);
            return (result, draft::Unhashed::default());
        }
        Err(text::TextError::Binary { line }) => {
            result.problems.push(Problem::new(
                source,
                line,
                "binary data, not a text log".into(),
            ));
            result.unreadable_blocks += 1;
            result.nothing = Some(Nothing::Problems);
            return (result, draft::Unhashed::default());
        }
    };
    result.encoding = Some(decoded.encoding);
    let mut lines = decoded.lines();
    skip_long_lines(source, 0, &mut lines, &mut result.problems);
    result.long_lines = result.problems.len();

    if perftest::json::detect(&lines) {
        match perftest::json::parse(source, &lines, &mut result.problems) {
            Ok(draft) => {
                let parser = &perftest::Perftest;
                let file = FileLines::whole(&lines);
                let run = draft::finish_run(parser, source, file, None, None, None, draft);
                result.runs.push(run);
            }
            Err(p) => {
                result.problems.push(p);
                result.unreadable_blocks += 1;
                result.nothing = Some(Nothing::Problems);
            }
        }
        return (result, draft::Unhashed::default());
    }
    let file = FileLines::whole(&lines).cut_from(&decoded.text);
    let blocks = transcript::split(&lines, file.span(0..lines.len()));
    let (asked, unhashed) = read_blocks(source, file, blocks, &mut result);
    let mut facts = facts::FileFacts::default();
    facts.add(&result.runs);
    facts.apply(&mut result.runs);
    if result.runs.is_empty() {
        result.nothing = Some(why_nothing(source, &lines, asked, &mut result.problems));
    }
    (result, unhashed)
}

/// No tool prints a line this long; such a line is cut from the input with a problem, so no
/// parser (or regex) scans megabytes at a time.
pub const MAX_LINE_BYTES: usize = 64 * 1024;

/// Empties the lines longer than [`MAX_LINE_BYTES`], with a problem each; `first` is the file
/// index of `lines[0]`.
fn skip_long_lines(source: &str, first: usize, lines: &mut [&str], problems: &mut Vec<Problem>) {
    for (i, line) in lines.iter_mut().enumerate() {
        if line.len() > MAX_LINE_BYTES {
            problems.push(Problem::new(
                source,
                (first + i) as u32 + 1,
                format!(
                    "line longer than {MAX_LINE_BYTES} bytes ({} bytes), skipped",
                    line.len()
                ),
            ));
            *line = "";
        }
    }
}

/// Why a file with no run yielded nothing; a file where nothing was recognised gets a problem
/// at line 1, so no input passes through an import unmentioned.
fn why_nothing(
    source: &str,
    lines: &[&str],
    asked: Option<Nothing>,
    problems: &mut Vec<Problem>,
) -> Nothing {
    if !problems.is_empty() {
        return Nothing::Problems;
    }
    let why = asked.or_else(|| command::help_or_version_text(lines));
    match why {
        Some(w) => w,
        None => {
            problems.push(Problem::new(
                source,
                1,
                "nothing recognised: no perftest, iperf, qperf, ibping or device-listing output in this file"
                    .into(),
            ));
            Nothing::Unrecognised
        }
    }
}

/// Reads `blocks` of `lines` in order into `result`; returns the first thing a `--help` /
/// `--version` command asked for, and the texts of the last runs, not hashed yet.
fn read_blocks(
    source: &str,
    lines: FileLines,
    blocks: Vec<transcript::Block>,
    result: &mut FileResult,
) -> (Option<Nothing>, draft::Unhashed) {
    let mut asked = None;
    let mut ids = draft::Ids::default();
    // Most blocks give one run: room for them at once, not grown by doubling (a run is large,
    // and each doubling copied every run so far).
    result.runs.reserve(blocks.len());
    for block in blocks {
        asked = asked.or(read_block(source, lines, block, result, Some(&mut ids)));
    }
    (asked, ids.unhashed())
}

/// Reads one command block with the parser its command names, or with every parser that
/// recognises its content; a named block that yields nothing is a problem. Returns what a
/// `--help`/`--version` command asked for, which yields no run by design. The runs get their
/// ids from `ids` (none without: a block read only for its facts). The block's host and
/// command go to its last run (the others get copies): most blocks give one run.
fn read_block(
    source: &str,
    lines: FileLines,
    block: transcript::Block,
    result: &mut FileResult,
    mut ids: Option<&mut draft::Ids>,
) -> Option<Nothing> {
    let command = block.command.as_ref();
    let range = block.output_start..block.end;
    let named = command.and_then(adapter::for_command);
    if let (Some(parser), Some(c)) = (named, command) {
        if let Some(asked) = command::asks_version_or_help(parser.family(), c) {
            // `ib_write_bw --version`, `iperf -v`: no run, nothing lost.
            return Some(asked);
        }
    }
    // A block typed with an unknown command (`cat run.log`) or no prompt is read by content.
    let parsers = match named {
        Some(p) => vec![p],
        None => adapter::detect(&lines[range.clone()], lines.span(range.clone())),
    };
    let problems_before = result.problems.len();
    let view = Block {
        source,
        lines,
        range: range.clone(),
        command,
        named: named.is_some(),
    };
    let mut drafts: Vec<(&dyn Parser, RunDraft)> = Vec::new();
    for parser in parsers {
        let found = parser.parse_block(&view, &mut result.problems);
        drafts.extend(found.into_iter().filter(|d| d.keep).map(|d| (parser, d)));
    }
    if drafts.is_empty() {
        let (parser, c) = named.zip(command).filter(|(p, _)| p.reports_empty())?;
        if result.problems.len() == problems_before {
            let has_output = lines[range].iter().any(|l| !l.trim().is_empty());
            let why = if has_output {
                format!("no {} output recognised after `{}`", parser.family(), c.raw)
            } else {
                format!("`{}` has no output in this log", c.raw)
            };
            result
                .problems
                .push(Problem::new(source, block.start as u32 + 1, why));
        } // else the parser already said what was wrong with this block.
        result.unreadable_blocks += 1;
        return None;
    }
    let prompt_line = command.map(|_| block.start);
    let (mut host, mut command) = (block.host, block.command);
    result.runs.reserve(drafts.len());
    let last = drafts.len() - 1;
    for (k, (parser, draft)) in drafts.into_iter().enumerate() {
        let text = ids
            .is_some()
            .then(|| draft::id_text(command.as_ref(), lines, &draft));
        let (host, command) = (
            common::take_or_copy(&mut host, k == last),
            common::take_or_copy(&mut command, k == last),
        );
        let run = draft::finish_run_without_id(parser, source, host, command, prompt_line, draft);
        result.runs.push(run);
        if let (Some(ids), Some(text)) = (ids.as_deref_mut(), text) {
            let index = result.runs.len() - 1;
            ids.add(&mut result.runs, index, text);
        }
    }
    None
}

//! Reading a large file in pieces, so memory follows the largest command block, not the file.
//!
//! A first pass ([`plan`], on every core) reads the file a megabyte at a time, finds the prompt
//! lines that start command blocks as a whole read would, cuts the file into pieces at block
//! starts, and collects the facts that apply across the file (device listings, qperf `conf`:
//! [`FileFacts`]). Each piece is then read and parsed on its own ([`parse_piece`]) with the line
//! indices of the file ([`FileLines`]), so the runs, rows, notes and problems are those of a
//! whole read. A file whose whole read would decode it differently (a BOM, UTF-16, bytes that
//! are not UTF-8, binary data, perftest JSON, nothing but whitespace) is read whole instead:
//! [`plan`] says `None`.

use super::facts::FileFacts;
use super::file_lines::FileLines;
use super::{adapter, qperf, read_block, read_blocks, skip_long_lines, text, transcript};
use super::{FileResult, Problem, MAX_LINE_BYTES};
use crate::model::Tool;
use std::io::{Read, Seek, SeekFrom};
use std::ops::Range;
use std::path::Path;

mod first_pass;

/// When a file is read in pieces, and how large they are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sizes {
    /// Files at least this large are read in pieces (when they can be, see [`plan`]).
    pub from: u64,
    /// A piece ends at the first block start at least this many bytes after its own start;
    /// the first pass reads the file a few pieces at a time.
    pub piece: usize,
}

impl Default for Sizes {
    /// 8 MiB and 256 KiB. A piece's runs are checked and freed right after its parse, while
    /// they are still in the core's cache: the runs of a 1 MiB piece take several megabytes,
    /// and freeing them took 7.6 % of the import of one large file, against 2.8 % for the
    /// same runs read from small files. A piece is still long enough that its first and last
    /// blocks are a small part of its work.
    fn default() -> Sizes {
        Sizes {
            from: 8 << 20,
            piece: 256 << 10,
        }
    }
}

/// One piece of a file: whole command blocks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Piece {
    pub bytes: Range<u64>,
    /// The 0-based file index of the piece's first line.
    pub first_line: usize,
    /// Where the line after the piece ends (`bytes.end` for the last piece): a parser may look
    /// one line past its block (perftest: is the table closed by a rule line?).
    pub lookahead_end: u64,
}

/// How a large file is read: its pieces, and the facts every piece's runs take.
#[derive(Debug)]
pub struct Plan {
    pub pieces: Vec<Piece>,
    pub facts: FileFacts,
}

/// The first pass over the file at `path` (reported as `source`), on up to `threads` threads
/// ([`first_pass`]); `None` when the file is to be read whole (see the module's text) or holds
/// a single piece.
pub fn plan(
    source: &str,
    path: &Path,
    piece: usize,
    threads: usize,
) -> std::io::Result<Option<Plan>> {
    first_pass::plan(source, path, piece, threads)
}

/// Blocks split from lines whose first is file line `first`, with file indices.
fn shifted<C>(mut blocks: Vec<transcript::Block<C>>, first: usize) -> Vec<transcript::Block<C>> {
    for b in &mut blocks {
        b.start += first;
        b.end += first;
        b.output_start += first;
    }
    blocks
}

/// Takes the facts of a block read by a parser of device listings or qperf (whose `conf`
/// applies to the file). The first pass knows only the program of a block's command: the
/// command is read whole for the few blocks read here.
fn read_facts(
    source: &str,
    lines: FileLines,
    block: &transcript::Block<String>,
    facts: &mut FileFacts,
) {
    let range = block.output_start..block.end;
    let gives = match named_parser(block) {
        // A qperf block's facts are its `conf` test's: a block of other tests is not parsed
        // here (its piece parses it), which was a third of this pass's parsing over the seeds.
        Some(parser) if parser.family() == Tool::Qperf => qperf::has_conf_test(&lines[range]),
        Some(parser) => gives_facts(parser),
        None => adapter::detects_any(&lines[range.clone()], lines.span(range), gives_facts),
    };
    if gives {
        let mut scratch = FileResult::default();
        let block = transcript::with_command(block, lines[block.start]);
        read_block(source, lines, block, &mut scratch, None);
        facts.add(&scratch.runs);
    }
}

/// Whether a block gives facts by the tool its command names; `None` when it names none (what
/// detection finds in it decides).
fn facts_by_command(block: &transcript::Block<String>) -> Option<bool> {
    named_parser(block).map(gives_facts)
}

/// The parser of the tool a block's command names, if it names one.
fn named_parser(block: &transcript::Block<String>) -> Option<&'static dyn adapter::Parser> {
    block.command.as_deref().and_then(adapter::for_program)
}

fn gives_facts(parser: &dyn adapter::Parser) -> bool {
    matches!(parser.family(), Tool::DevInfo | Tool::Qperf)
}

/// Reads the bytes of one piece of the file at `path`, and the line after it.
pub fn read_piece(path: &Path, piece: &Piece) -> std::io::Result<Vec<u8>> {
    let mut file = std::fs::File::open(path)?;
    file.seek(SeekFrom::Start(piece.bytes.start))?;
    let len = piece.lookahead_end - piece.bytes.start;
    // Into the spare capacity through `Take`: a piece is not zeroed first, only to be
    // overwritten.
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(len).read_to_end(&mut bytes)?;
    if bytes.len() as u64 != len {
        return Err(std::io::ErrorKind::UnexpectedEof.into());
    }
    Ok(bytes)
}

/// Parses one piece of a planned file (`bytes` as [`read_piece`] reads them): the runs,
/// problems and counts a whole read gives for these lines.
pub fn parse_piece(source: &str, bytes: &[u8], piece: &Piece, facts: &FileFacts) -> FileResult {
    let mut result = FileResult {
        encoding: Some("utf-8"),
        ..FileResult::default()
    };
    let Ok(text) = simdutf8::basic::from_utf8(bytes) else {
        // The first pass read UTF-8 here.
        result.problems.push(Problem::new(
            source,
            piece.first_line as u32 + 1,
            "the file changed while it was read (no longer UTF-8 here); import it again".into(),
        ));
        return result;
    };
    let decoded = text::decode_utf8(text);
    let mut lines = decoded.lines();
    let own = lines.len() - usize::from(piece.lookahead_end > piece.bytes.end);
    skip_long_lines(
        source,
        piece.first_line,
        &mut lines[..own],
        &mut result.problems,
    );
    result.long_lines = result.problems.len();
    for l in lines[own..].iter_mut().filter(|l| l.len() > MAX_LINE_BYTES) {
        *l = ""; // the next piece's line: cut there, with its problem
    }
    let file = FileLines::starting_at(piece.first_line, &lines).cut_from(&decoded.text);
    let span = file.span(piece.first_line..piece.first_line + own);
    let blocks = shifted(transcript::split(&lines[..own], span), piece.first_line);
    let (_, unhashed) = read_blocks(source, file, blocks, &mut result);
    // A piece holds a megabyte of runs: its last ones hash among themselves.
    super::draft::give_ids([(&mut result.runs[..], unhashed)]);
    facts.apply(&mut result.runs);
    result
}

/// Reads a file in pieces of `piece` bytes one after another, as one result: what
/// [`super::parse_bytes`] gives for the whole file (the import reads the pieces on every core
/// instead). `None` when the file is read whole (see [`plan`]). A file without a single run is
/// read again whole, as the import does: that read says why it yields nothing. The first pass
/// runs on up to `threads` threads.
pub fn parse_in_pieces(
    source: &str,
    path: &Path,
    piece: usize,
    threads: usize,
) -> std::io::Result<Option<FileResult>> {
    let Some(plan) = plan(source, path, piece, threads)? else {
        return Ok(None);
    };
    let mut all = FileResult::default();
    for p in &plan.pieces {
        all.append_piece(parse_piece(source, &read_piece(path, p)?, p, &plan.facts));
    }
    if all.runs.is_empty() {
        return Ok(Some(super::parse_bytes(source, &std::fs::read(path)?)));
    }
    Ok(Some(all))
}

#[cfg(test)]
mod tests;

//! Reading a large file in pieces, so memory follows the largest command block, not the file.
//!
//! A first pass ([`plan`]) reads the file a megabyte at a time, splits it into command blocks
//! at prompt lines as a whole read would, cuts it into pieces at block starts, and collects the
//! facts that apply across the file (device listings, qperf `conf`: [`FileFacts`]). Each piece
//! is then read and parsed on its own ([`parse_piece`]) with the line indices of the file
//! ([`FileLines`]), so the runs, rows, notes and problems are those of a whole read. A file whose
//! whole read would decode it differently (a BOM, UTF-16, bytes that are not UTF-8, binary
//! data, perftest JSON, nothing but whitespace) is read whole instead: [`plan`] says `None`.

use super::facts::FileFacts;
use super::file_lines::FileLines;
use super::{adapter, perftest, read_block, read_blocks, skip_long_lines, text, transcript};
use super::{FileResult, Problem, MAX_LINE_BYTES};
use crate::model::Tool;
use std::io::{Read, Seek, SeekFrom};
use std::ops::Range;
use std::path::Path;

/// When a file is read in pieces, and how large they are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sizes {
    /// Files at least this large are read in pieces (when they can be, see [`plan`]).
    pub from: u64,
    /// A piece ends at the first block start at least this many bytes after its own start;
    /// the first pass reads the file this many bytes at a time.
    pub piece: usize,
}

impl Default for Sizes {
    /// 8 MiB and 1 MiB: a few pieces in flight per core stay within tens of megabytes with
    /// their parsed runs, and a piece is long enough that its first and last blocks are a
    /// small part of its work.
    fn default() -> Sizes {
        Sizes {
            from: 8 << 20,
            piece: 1 << 20,
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

/// Why the first pass gave up on reading in pieces: the whole read decodes this file otherwise.
struct ReadWhole;

/// The first pass over the file at `path` (reported as `source`); `None` when the file is to be
/// read whole (see the module's text) or holds a single piece. Every piece waits for it, so it
/// uses up to `threads` threads: prompts are looked for on all of them, and the blocks that may
/// give facts are read on another while the pass goes on.
pub fn plan(
    source: &str,
    path: &Path,
    piece: usize,
    threads: usize,
) -> std::io::Result<Option<Plan>> {
    if threads <= 1 {
        return first_pass(
            source,
            path,
            piece,
            1,
            FactBlocks::Here(FileFacts::default()),
        );
    }
    std::thread::scope(|scope| {
        // The blocks of a chunk go over together (a hand-over per block cost a wake-up per
        // block), and two chunks' at most are in flight: the pass runs a little ahead of the
        // reader, never far with copies of blocks.
        let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<FactBlock>>(2);
        let reader = scope.spawn(move || {
            let mut facts = FileFacts::default();
            for b in rx.into_iter().flatten() {
                b.read(source, &mut facts);
            }
            facts
        });
        // The pass owns the sender: when it returns, the reader ends.
        let planned = first_pass(source, path, piece, threads, FactBlocks::There(tx));
        let facts = reader
            .join()
            .unwrap_or_else(|e| std::panic::resume_unwind(e));
        Ok(planned?.map(|plan| Plan { facts, ..plan }))
    })
}

/// Where the first pass reads the blocks that may give facts: as it meets them, or on another
/// thread, each sent with a copy of its lines.
enum FactBlocks {
    Here(FileFacts),
    There(std::sync::mpsc::SyncSender<Vec<FactBlock>>),
}

/// A block that may give facts, with its lines and the one after it (a parser may look there).
struct FactBlock {
    block: transcript::Block,
    lines: Vec<String>,
}

impl FactBlock {
    fn read(&self, source: &str, facts: &mut FileFacts) {
        let lines: Vec<&str> = self.lines.iter().map(String::as_str).collect();
        read_facts(
            source,
            FileLines::starting_at(self.block.start, &lines),
            &self.block,
            facts,
        );
    }
}

fn first_pass(
    source: &str,
    path: &Path,
    piece: usize,
    threads: usize,
    facts: FactBlocks,
) -> std::io::Result<Option<Plan>> {
    let piece = piece.max(1);
    let mut file = std::fs::File::open(path)?;
    let mut buf = Vec::with_capacity(2 * piece);
    let mut planner = Planner::new(source, piece, threads, facts);
    loop {
        // A block longer than a piece is read on at its own size, so re-reading what waits
        // costs time in proportion to the block, not its square.
        let old = buf.len();
        let want = piece.max(old);
        buf.resize(old + want, 0);
        let n = read_full(&mut file, &mut buf[old..])?;
        buf.truncate(old + n);
        let eof = n < want;
        if planner.offset == 0 && old == 0 && !starts_as_plain_text(&buf) {
            return Ok(None);
        }
        match planner.step(&buf, eof) {
            Ok(used) => {
                buf.drain(..used);
            }
            Err(ReadWhole) => return Ok(None),
        }
        if eof {
            break;
        }
    }
    Ok(planner.finish())
}

/// Reads until `buf` is full or the file ends; returns the bytes read.
fn read_full(file: &mut std::fs::File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match file.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// No byte-order mark and no control bytes that [`text::decode`] calls binary.
fn starts_as_plain_text(head: &[u8]) -> bool {
    let bom = [&[0xEF, 0xBB, 0xBF][..], &[0xFF, 0xFE], &[0xFE, 0xFF]];
    !bom.iter().any(|b| head.starts_with(b)) && !text::binary_head(head)
}

struct Planner<'s> {
    source: &'s str,
    piece_bytes: usize,
    /// Threads to look for prompts on.
    threads: usize,
    /// The file offset and line index of the first byte not yet taken.
    offset: u64,
    line: usize,
    /// Where the piece being built starts.
    piece: Piece,
    pieces: Vec<Piece>,
    facts: FactBlocks,
    /// Whether anything but whitespace was seen (a blank file is read whole: it says why).
    text_seen: bool,
}

impl<'s> Planner<'s> {
    fn new(source: &'s str, piece_bytes: usize, threads: usize, facts: FactBlocks) -> Planner<'s> {
        Planner {
            source,
            piece_bytes,
            threads,
            offset: 0,
            line: 0,
            piece: Piece {
                bytes: 0..0,
                first_line: 0,
                lookahead_end: 0,
            },
            pieces: Vec::new(),
            facts,
            text_seen: false,
        }
    }

    /// Takes the complete blocks of `buf` (the bytes from `offset` on); returns how many bytes
    /// it took: the last block may go on in the bytes not read yet, so it waits, unless `eof`.
    fn step(&mut self, buf: &[u8], eof: bool) -> Result<usize, ReadWhole> {
        let cut = match memchr::memrchr(b'\n', buf) {
            _ if eof => buf.len(),
            Some(p) => p + 1,
            None => return Ok(0),
        };
        let chunk = &buf[..cut];
        if memchr::memchr(0, chunk).is_some() {
            return Err(ReadWhole);
        }
        let text = std::str::from_utf8(chunk).map_err(|_| ReadWhole)?;
        self.text_seen = self.text_seen || text.bytes().any(|b| !b.is_ascii_whitespace());
        let decoded = text::decode_utf8(text);
        let mut lines = decoded.lines();
        for l in lines.iter_mut().filter(|l| l.len() > MAX_LINE_BYTES) {
            *l = "";
        }
        if self.offset == 0 && perftest::json::detect(&lines) {
            return Err(ReadWhole);
        }
        let blocks = shifted(transcript::split_on(&lines, self.threads), self.line);
        let complete = if eof {
            blocks.len()
        } else {
            blocks.len().saturating_sub(1)
        };
        if complete == 0 && !eof {
            return Ok(0);
        }
        // Byte offset in `chunk` of each line's start (one past the last line too).
        let starts: Vec<usize> = std::iter::once(0)
            .chain(memchr::memchr_iter(b'\n', chunk).map(|p| p + 1))
            .collect();
        let file = FileLines::starting_at(self.line, &lines);
        let mut to_read = Vec::new();
        for block in &blocks[..complete] {
            // (The file's last line may have no newline: it then ends where the chunk does.)
            let at = |line: usize| {
                self.offset + starts.get(line - self.line).copied().unwrap_or(cut) as u64
            };
            // A block's first line is whole in the chunk, so the start of the next one is there.
            self.piece_boundary(at(block.start), at(block.start + 1), block.start);
            match &mut self.facts {
                FactBlocks::Here(facts) => read_facts(self.source, file, block, facts),
                FactBlocks::There(_) if facts_by_command(block) != Some(false) => {
                    let lines = &file[block.start..(block.end + 1).min(file.end())];
                    to_read.push(FactBlock {
                        block: block.clone(),
                        lines: lines.iter().map(|l| l.to_string()).collect(),
                    });
                }
                FactBlocks::There(_) => {}
            }
        }
        if let (FactBlocks::There(reader), false) = (&self.facts, to_read.is_empty()) {
            // The reader ends only with this pass.
            let _ = reader.send(to_read);
        }
        let (used, used_lines) = match blocks.get(complete) {
            Some(waiting) => (starts[waiting.start - self.line], waiting.start - self.line),
            None => (cut, lines.len()),
        };
        self.offset += used as u64;
        self.line += used_lines;
        Ok(used)
    }

    /// Ends the piece being built before a block at `at` (line `line`, which ends at
    /// `line_end`) once it is long enough.
    fn piece_boundary(&mut self, at: u64, line_end: u64, line: usize) {
        if at - self.piece.bytes.start >= self.piece_bytes as u64 {
            let mut done = std::mem::replace(
                &mut self.piece,
                Piece {
                    bytes: at..at,
                    first_line: line,
                    lookahead_end: 0,
                },
            );
            done.bytes.end = at;
            done.lookahead_end = line_end;
            self.pieces.push(done);
        }
    }

    fn finish(mut self) -> Option<Plan> {
        if !self.text_seen || self.pieces.is_empty() {
            return None;
        }
        self.piece.bytes.end = self.offset;
        self.piece.lookahead_end = self.offset;
        self.pieces.push(self.piece);
        Some(Plan {
            pieces: self.pieces,
            facts: match self.facts {
                FactBlocks::Here(facts) => facts,
                FactBlocks::There(_) => FileFacts::default(), // the reader's, filled in by `plan`
            },
        })
    }
}

/// Blocks split from lines whose first is file line `first`, with file indices.
fn shifted(mut blocks: Vec<transcript::Block>, first: usize) -> Vec<transcript::Block> {
    for b in &mut blocks {
        b.start += first;
        b.end += first;
        b.output_start += first;
    }
    blocks
}

/// Takes the facts of a block read by a parser of device listings or qperf (whose `conf`
/// applies to the file).
fn read_facts(source: &str, lines: FileLines, block: &transcript::Block, facts: &mut FileFacts) {
    let gives = facts_by_command(block).unwrap_or_else(|| {
        adapter::detect(&lines[block.output_start..block.end])
            .iter()
            .any(gives_facts)
    });
    if gives {
        let mut scratch = FileResult::default();
        read_block(source, lines, block, &mut scratch);
        facts.add(&scratch.runs);
    }
}

/// Whether a block gives facts by the tool its command names; `None` when it names none (what
/// detection finds in it decides).
fn facts_by_command(block: &transcript::Block) -> Option<bool> {
    let parser = block.command.as_ref().and_then(adapter::for_command)?;
    Some(gives_facts(&parser))
}

fn gives_facts(parser: &&dyn adapter::Parser) -> bool {
    matches!(parser.family(), Tool::DevInfo | Tool::Qperf)
}

/// Reads the bytes of one piece of the file at `path`, and the line after it.
pub fn read_piece(path: &Path, piece: &Piece) -> std::io::Result<Vec<u8>> {
    let mut file = std::fs::File::open(path)?;
    file.seek(SeekFrom::Start(piece.bytes.start))?;
    let mut bytes = vec![0; (piece.lookahead_end - piece.bytes.start) as usize];
    file.read_exact(&mut bytes)?;
    Ok(bytes)
}

/// Parses one piece of a planned file (`bytes` as [`read_piece`] reads them): the runs,
/// problems and counts a whole read gives for these lines.
pub fn parse_piece(source: &str, bytes: &[u8], piece: &Piece, facts: &FileFacts) -> FileResult {
    let mut result = FileResult {
        encoding: Some("utf-8"),
        ..FileResult::default()
    };
    let Ok(text) = std::str::from_utf8(bytes) else {
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
    let file = FileLines::starting_at(piece.first_line, &lines);
    let blocks = shifted(transcript::split(&lines[..own]), piece.first_line);
    read_blocks(source, file, blocks, &mut result);
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

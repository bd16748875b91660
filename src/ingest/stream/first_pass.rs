//! The first pass over a large file ([`super::plan`]), on every core: every piece waits for it.
//!
//! The file is cut into one range a thread, at line starts. Each range's pass reads its bytes
//! [`READ_PIECES`] pieces' size at a time, checks they decode as a whole read decodes them,
//! finds the prompt lines that start in it (a piece may begin at any of them) and reads the
//! facts of the blocks that start in it, reading on past its end for the last of them. The
//! ranges' findings are then joined in file order: line numbers shifted by the lines before
//! each range, the pieces cut, the facts merged ([`FileFacts::merge`]) as one pass over the
//! file would have added them.

use super::{read_facts, shifted, Piece, Plan};
use crate::ingest::facts::FileFacts;
use crate::ingest::file_lines::FileLines;
use crate::ingest::{perftest, text, transcript, MAX_LINE_BYTES};
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// Why the first pass gave up on reading in pieces: the whole read decodes this file otherwise.
struct ReadWhole;

/// A prompt line, where a block starts and so a piece may.
struct Cut {
    at: u64,
    /// Where the prompt line ends (a piece cut here looks that far into the next).
    line_end: u64,
    /// Its line index, counted from the range's first line.
    line: usize,
}

/// What the pass over one range found.
#[derive(Default)]
struct Found {
    /// How many lines start in the range.
    lines: usize,
    cuts: Vec<Cut>,
    /// The facts of the blocks that start in the range.
    facts: FileFacts,
    text_seen: bool,
    /// The offset the pass read to: the end of the file, for the last range.
    offset: u64,
}

/// How many pieces' bytes the pass reads at a time. The last block of a read waits for the
/// next one and is read again with it: the larger the read, the less of it is read twice. A
/// piece is small, for its parse (see [`super::Sizes`]), the pass's read need not be.
const READ_PIECES: usize = 4;

/// See the module's text; `None` when the file is to be read whole or holds a single piece.
pub(super) fn plan(
    source: &str,
    path: &Path,
    piece: usize,
    threads: usize,
) -> std::io::Result<Option<Plan>> {
    let piece = piece.max(1);
    let starts = range_starts(path, threads.max(1))?;
    let read = piece.saturating_mul(READ_PIECES);
    let pass = |k: usize| {
        // The last range reads to the end of the file, whatever its size is by then.
        let end = starts.get(k + 1).copied().unwrap_or(u64::MAX);
        pass_range(source, path, starts[k]..end, read)
    };
    let found: Vec<_> = std::thread::scope(|scope| {
        let others: Vec<_> = (1..starts.len())
            .map(|k| scope.spawn(move || pass(k)))
            .collect();
        let mut found = vec![pass(0)];
        // A panic in a range's pass is the caller's, as it would be on one thread.
        found.extend(
            others
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))),
        );
        found
    });
    let mut ranges = Vec::with_capacity(found.len());
    for f in found {
        match f? {
            Ok(f) => ranges.push(f),
            Err(ReadWhole) => return Ok(None),
        }
    }
    Ok(join(ranges, piece as u64))
}

/// Where each range starts: at 0, and at the first line start at or after each `k / threads`
/// of the file (ranges that would be empty are left out).
fn range_starts(path: &Path, threads: usize) -> std::io::Result<Vec<u64>> {
    let mut file = std::fs::File::open(path)?;
    let size = file.metadata()?.len();
    let mut starts = vec![0];
    let mut buf = vec![0; 64 << 10];
    for k in 1..threads as u64 {
        // From the byte before the share's first: a share that begins a line begins a range.
        let mut at = (size * k / threads as u64).saturating_sub(1);
        if at < *starts.last().expect("the first range") {
            continue;
        }
        file.seek(SeekFrom::Start(at))?;
        let start = loop {
            let n = file.read(&mut buf)?;
            if n == 0 {
                break size;
            }
            if let Some(p) = memchr::memchr(b'\n', &buf[..n]) {
                break at + p as u64 + 1;
            }
            at += n as u64;
        };
        if start < size && start > *starts.last().expect("the first range") {
            starts.push(start);
        }
    }
    Ok(starts)
}

/// The first pass over the lines that start in `range` (a line start, to the end of the file
/// for `u64::MAX`).
fn pass_range(
    source: &str,
    path: &Path,
    range: std::ops::Range<u64>,
    read: usize,
) -> std::io::Result<Result<Found, ReadWhole>> {
    let mut file = std::fs::File::open(path)?;
    file.seek(SeekFrom::Start(range.start))?;
    // The file's first read holds the head a whole read judges binary by (or all of the file).
    let read = if range.start == 0 {
        read.max(text::HEAD_BYTES)
    } else {
        read
    };
    let mut buf = Vec::with_capacity(2 * read);
    let mut pass = RangePass {
        source,
        offset: range.start,
        line: 0,
        continuing: range.start > 0,
        found: Found::default(),
        range,
    };
    loop {
        // A block longer than a read is read on at its own size, so re-reading what waits
        // costs time in proportion to the block, not its square.
        let old = buf.len();
        let want = read.max(old);
        buf.reserve(want);
        // Into the spare capacity through `Take`: nothing zeroed first, nothing read past it.
        let n = (&mut file).take(want as u64).read_to_end(&mut buf)?;
        let eof = n < want;
        if pass.offset == 0 && old == 0 && !starts_as_plain_text(&buf) {
            return Ok(Err(ReadWhole));
        }
        match pass.step(&buf, eof) {
            Ok(Step::Took(used)) => {
                buf.drain(..used);
            }
            Ok(Step::Done) => break,
            Err(why) => return Ok(Err(why)),
        }
        if eof {
            break;
        }
    }
    pass.found.offset = pass.offset;
    Ok(Ok(pass.found))
}

/// No byte-order mark and no control bytes that [`text::decode`] calls binary.
fn starts_as_plain_text(head: &[u8]) -> bool {
    let bom = [&[0xEF, 0xBB, 0xBF][..], &[0xFF, 0xFE], &[0xFE, 0xFF]];
    !bom.iter().any(|b| head.starts_with(b)) && !text::binary_head(head)
}

struct RangePass<'s> {
    source: &'s str,
    range: std::ops::Range<u64>,
    /// The file offset, and the line index from the range's first line, of the first byte not
    /// yet taken.
    offset: u64,
    line: usize,
    /// Whether the next lines up to a prompt end a block already taken (or one that starts
    /// before the range).
    continuing: bool,
    found: Found,
}

enum Step {
    /// Took this many bytes; the rest waits for more of the file.
    Took(usize),
    /// Every block that starts in the range is taken.
    Done,
}

impl RangePass<'_> {
    /// Takes the complete blocks of `buf` (the bytes from `offset` on) that start in the range.
    /// The last block may go on in the bytes not read yet, so it waits, unless `eof`.
    fn step(&mut self, buf: &[u8], eof: bool) -> Result<Step, ReadWhole> {
        let cut = match memchr::memrchr(b'\n', buf) {
            _ if eof => buf.len(),
            Some(p) => p + 1,
            None => return Ok(Step::Took(0)),
        };
        // Bytes past the range are checked too: the next range's pass checks them as well,
        // and either says the same.
        let chunk = &buf[..cut];
        if memchr::memchr(0, chunk).is_some() {
            return Err(ReadWhole);
        }
        let text = simdutf8::basic::from_utf8(chunk).map_err(|_| ReadWhole)?;
        self.found.text_seen =
            self.found.text_seen || text.bytes().any(|b| !b.is_ascii_whitespace());
        let decoded = text::decode_utf8(text);
        let mut lines = decoded.lines();
        let starts = line_starts(text, &decoded, &lines);
        for l in lines.iter_mut().filter(|l| l.len() > MAX_LINE_BYTES) {
            *l = "";
        }
        if self.offset == 0 {
            // Whether the file is perftest JSON goes by its first lines: they wait for each
            // other.
            if !eof && lines.len() < perftest::json::HEAD_LINES {
                return Ok(Step::Took(0));
            }
            if perftest::json::detect(&lines) {
                return Err(ReadWhole);
            }
        }
        let (offset, first_line) = (self.offset, self.line);
        let file = FileLines::starting_at(first_line, &lines).cut_from(&decoded.text);
        let span = file.span(first_line..first_line + lines.len());
        let blocks = shifted(transcript::split_programs(&lines, span), first_line);
        // (The file's last line may have no newline: it then ends where the chunk does.)
        let at =
            |line: usize| offset + starts.get(line - first_line).copied().unwrap_or(cut) as u64;
        let reaches_end = offset + cut as u64 >= self.range.end;
        let complete = if eof { blocks.len() } else { blocks.len() - 1 };
        // Where the bytes that wait for the next step start (in lines from the chunk's first).
        let mut keep_from = blocks.get(complete).map(|b| b.start - first_line);
        for (k, block) in blocks.iter().enumerate() {
            let start = at(block.start);
            if start >= self.range.end {
                return Ok(self.done(&starts));
            }
            let prompted = block.output_start > block.start;
            if k == 0 && !prompted && self.continuing {
                // The end of a block already taken, or of one that starts before the range (the
                // previous range's): only where it ends matters, so none of it waits.
                if k == complete {
                    if reaches_end {
                        return Ok(self.done(&starts));
                    }
                    keep_from = None;
                }
                continue;
            }
            self.continuing = false;
            if k == complete {
                // It waits for its end, unless its command says it gives no facts: then only
                // where it starts matters, and none of it waits.
                if prompted && super::facts_by_command(block) == Some(false) {
                    self.add_cut(block, start, at(block.start + 1));
                    if reaches_end {
                        return Ok(self.done(&starts));
                    }
                    self.continuing = true;
                    keep_from = None;
                }
                break;
            }
            if prompted {
                self.add_cut(block, start, at(block.start + 1));
            }
            read_facts(self.source, file, block, &mut self.found.facts);
        }
        let (used, used_lines) = match keep_from {
            Some(line) => (starts[line], line),
            None => (cut, lines.len()),
        };
        self.count_own_lines(&starts, used);
        self.offset += used as u64;
        self.line += used_lines;
        Ok(Step::Took(used))
    }

    fn add_cut(&mut self, block: &transcript::Block<String>, at: u64, line_end: u64) {
        self.found.cuts.push(Cut {
            at,
            line_end,
            line: block.start,
        });
    }

    /// Counts the lines that start in the range among those before `limit` in the chunk.
    fn count_own_lines(&mut self, starts: &[usize], limit: usize) {
        let own = self.range.end.saturating_sub(self.offset).min(limit as u64) as usize;
        self.found.lines += starts.partition_point(|&p| p < own);
    }

    /// Every block that starts in the range is taken: its lines are counted to its end.
    fn done(&mut self, starts: &[usize]) -> Step {
        self.count_own_lines(starts, usize::MAX);
        Step::Done
    }
}

/// The byte offset in `chunk` of each line's start, and one past each newline (one past the
/// last line too, when a newline ends it). Worked out from where `decoded`'s lines lie when
/// it is `chunk` itself (no CR or escape to drop), which saves a second search for newlines.
fn line_starts(chunk: &str, decoded: &text::Decoded, lines: &[&str]) -> Vec<usize> {
    let first = std::iter::once(0);
    if !std::ptr::eq(decoded.text.as_ptr(), chunk.as_ptr()) {
        let newlines = memchr::memchr_iter(b'\n', chunk.as_bytes());
        return first.chain(newlines.map(|p| p + 1)).collect();
    }
    // Every line but an unterminated last one ends at a newline of its own.
    let base = chunk.as_ptr() as usize;
    let ends = lines
        .iter()
        .map(|l| l.as_ptr() as usize - base + l.len() + 1);
    first.chain(ends.filter(|&e| e <= chunk.len())).collect()
}

/// The plan of the file from its ranges' findings, in file order.
fn join(ranges: Vec<Found>, piece_bytes: u64) -> Option<Plan> {
    let text_seen = ranges.iter().any(|f| f.text_seen);
    let end = ranges.last().map_or(0, |f| f.offset);
    let mut piece = Piece {
        bytes: 0..0,
        first_line: 0,
        lookahead_end: 0,
    };
    let mut pieces = Vec::new();
    let mut facts = FileFacts::default();
    let mut lines_before = 0;
    for range in ranges {
        for cut in range.cuts {
            if cut.at - piece.bytes.start >= piece_bytes {
                let next = Piece {
                    bytes: cut.at..cut.at,
                    first_line: lines_before + cut.line,
                    lookahead_end: 0,
                };
                let mut done = std::mem::replace(&mut piece, next);
                done.bytes.end = cut.at;
                done.lookahead_end = cut.line_end;
                pieces.push(done);
            }
        }
        facts.merge(range.facts);
        lines_before += range.lines;
    }
    if !text_seen || pieces.is_empty() {
        return None;
    }
    piece.bytes.end = end;
    piece.lookahead_end = end;
    pieces.push(piece);
    Some(Plan { pieces, facts })
}

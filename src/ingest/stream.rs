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
/// read whole (see the module's text) or holds a single piece.
pub fn plan(source: &str, path: &Path, piece: usize) -> std::io::Result<Option<Plan>> {
    let piece = piece.max(1);
    let mut file = std::fs::File::open(path)?;
    let mut buf = Vec::with_capacity(2 * piece);
    let mut planner = Planner::new(source, piece);
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
    /// The file offset and line index of the first byte not yet taken.
    offset: u64,
    line: usize,
    /// Where the piece being built starts.
    piece: Piece,
    pieces: Vec<Piece>,
    facts: FileFacts,
    /// Whether anything but whitespace was seen (a blank file is read whole: it says why).
    text_seen: bool,
}

impl<'s> Planner<'s> {
    fn new(source: &'s str, piece_bytes: usize) -> Planner<'s> {
        Planner {
            source,
            piece_bytes,
            offset: 0,
            line: 0,
            piece: Piece {
                bytes: 0..0,
                first_line: 0,
                lookahead_end: 0,
            },
            pieces: Vec::new(),
            facts: FileFacts::default(),
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
        let blocks = shifted(transcript::split(&lines), self.line);
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
        for block in &blocks[..complete] {
            // (The file's last line may have no newline: it then ends where the chunk does.)
            let at = |line: usize| {
                self.offset + starts.get(line - self.line).copied().unwrap_or(cut) as u64
            };
            // A block's first line is whole in the chunk, so the start of the next one is there.
            self.piece_boundary(at(block.start), at(block.start + 1), block.start);
            if gives_facts(file, block) {
                let mut scratch = FileResult::default();
                read_block(self.source, file, block, &mut scratch);
                self.facts.add(&scratch.runs);
            }
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
            facts: self.facts,
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

/// Whether a block is read by a parser of device listings or qperf (whose `conf` applies to
/// the file): by the tool its command names, else by what detection finds in it.
fn gives_facts(lines: FileLines, block: &transcript::Block) -> bool {
    let facts = |p: &&dyn adapter::Parser| matches!(p.family(), Tool::DevInfo | Tool::Qperf);
    match block.command.as_ref().and_then(adapter::for_command) {
        Some(p) => facts(&p),
        None => adapter::detect(&lines[block.output_start..block.end])
            .iter()
            .any(facts),
    }
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
/// read again whole, as the import does: that read says why it yields nothing.
pub fn parse_in_pieces(
    source: &str,
    path: &Path,
    piece: usize,
) -> std::io::Result<Option<FileResult>> {
    let Some(plan) = plan(source, path, piece)? else {
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
mod tests {
    use super::*;
    use crate::ingest::parse_bytes;

    /// Reads `path` whole and in pieces of each size; returns how many reads were in pieces.
    fn compare(path: &Path, sizes: &[usize]) -> usize {
        let whole = parse_bytes(&path.display().to_string(), &std::fs::read(path).unwrap());
        let mut in_pieces = 0;
        let source = path.display().to_string();
        for &piece in sizes {
            let Some(plan) = plan(&source, path, piece).unwrap() else {
                continue;
            };
            let pieces = plan.pieces;
            let read = parse_in_pieces(&source, path, piece).unwrap().unwrap();
            in_pieces += 1;
            let size = std::fs::metadata(path).unwrap().len();
            assert_eq!(pieces[0].bytes.start, 0);
            assert_eq!(pieces.last().unwrap().bytes.end, size, "{path:?}");
            for w in pieces.windows(2) {
                assert_eq!(w[0].bytes.end, w[1].bytes.start, "{path:?}");
                assert!(w[0].first_line < w[1].first_line, "{path:?}");
            }
            let at = format!("{} in pieces of {piece} bytes", path.display());
            assert_eq!(read.runs.len(), whole.runs.len(), "{at}");
            for (a, b) in read.runs.iter().zip(&whole.runs) {
                if a != b {
                    let (a, b) = (format!("{a:?}"), format!("{b:?}"));
                    let i = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
                    let near =
                        |s: &str| s[i.saturating_sub(200)..(i + 200).min(s.len())].to_string();
                    panic!("{at}: a run differs\n{}\nwhole:\n{}", near(&a), near(&b));
                }
            }
            assert_eq!(read.problems, whole.problems, "{at}");
            assert_eq!(read.long_lines, whole.long_lines, "{at}");
            assert_eq!(read.unreadable_blocks, whole.unreadable_blocks, "{at}");
            assert_eq!(read.encoding, whole.encoding, "{at}");
        }
        in_pieces
    }

    #[test]
    fn every_fixture_read_in_pieces_reads_as_a_whole_read() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let files = crate::pipeline::collect_files(&[root.join("fixtures")]).unwrap();
        let in_pieces: usize = files.iter().map(|f| compare(f, &[1, 700, 64 * 1024])).sum();
        // The transcripts of several commands (seeds, samples): the comparison ran on them.
        assert!(in_pieces >= 12, "only {in_pieces} reads in pieces");
    }

    /// Every fixture that is plain UTF-8 in one transcript, each after a `cat` of it: blocks of
    /// every tool read by content, device listings and qperf `conf` far from the runs they
    /// describe, cut into pieces of many sizes.
    #[test]
    fn a_transcript_of_every_fixture_reads_in_pieces_as_whole() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let files = crate::pipeline::collect_files(&[root.join("fixtures")]).unwrap();
        let mut transcript = Vec::new();
        for f in &files {
            let bytes = std::fs::read(f).unwrap();
            let plain = std::str::from_utf8(&bytes).is_ok()
                && !bytes.starts_with(b"\xef\xbb\xbf")
                && !bytes.contains(&0);
            if plain && !bytes.is_empty() {
                let name = f.strip_prefix(root).unwrap().display();
                transcript.extend(format!("[root@lab ~]# cat {name}\n").bytes());
                transcript.extend(&bytes);
                if !bytes.ends_with(b"\n") {
                    transcript.push(b'\n');
                }
            }
        }
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("all.txt");
        std::fs::write(&path, &transcript).unwrap();
        assert!(transcript.len() > 1_000_000, "{}", transcript.len());
        let sizes = [1, 4096, 100_000, 1 << 20];
        assert_eq!(compare(&path, &sizes), sizes.len());
        // The file-wide facts were there to be carried across pieces.
        let whole = parse_bytes("all.txt", &transcript);
        let with = |prefix: &str| {
            let has = |r: &&crate::model::Run| r.facts.keys().any(|k| k.starts_with(prefix));
            whole.runs.iter().filter(has).count()
        };
        assert!(
            with("device.") > 0 && with("conf.") > 0,
            "{} {}",
            with("device."),
            with("conf.")
        );
    }

    /// A seed transcript with CRLF line ends, colour codes, a line too long to read and no
    /// final newline: cleaned and cut line by line, pieces read as the whole.
    #[test]
    fn crlf_colours_and_long_lines_read_in_pieces_as_whole() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let seed =
            std::fs::read_to_string(root.join("fixtures/seeds/000_8f7f2e13e9bf4848.txt")).unwrap();
        let mut text = String::new();
        for (i, line) in seed.lines().enumerate() {
            if i == 40 {
                text.push_str(&"x".repeat(MAX_LINE_BYTES + 10));
                text.push_str("\r\n");
            }
            if line.contains("#bytes") {
                text.push_str("\x1b[1;32m");
            }
            text.push_str(line);
            text.push_str("\r\n");
        }
        text.truncate(text.len() - 2);
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("crlf.txt");
        std::fs::write(&path, &text).unwrap();
        assert_eq!(compare(&path, &[1, 3000, 70_000]), 3);
        let whole = parse_bytes("crlf.txt", text.as_bytes());
        assert_eq!(whole.long_lines, 1);
        assert!(whole.runs.len() > 10);
    }

    /// Inputs the `read_in_pieces` fuzz target found: the first byte picks the piece size.
    #[test]
    fn fuzz_finds_read_in_pieces_as_whole() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/invalid");
        let tmp = tempfile::tempdir().unwrap();
        let mut found = 0;
        for entry in std::fs::read_dir(root).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if !name.starts_with("fuzz-read_in_pieces-") {
                continue;
            }
            let input = std::fs::read(&path).unwrap();
            let Some((&pick, bytes)) = input.split_first() else {
                continue;
            };
            let file = tmp.path().join(&name);
            std::fs::write(&file, bytes).unwrap();
            found += compare(&file, &[1 + usize::from(pick) * 16]);
        }
        assert!(found > 0);
    }

    #[test]
    fn what_a_whole_read_decodes_otherwise_is_read_whole() {
        let tmp = tempfile::tempdir().unwrap();
        let transcript = std::fs::read(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/seeds/000_8f7f2e13e9bf4848.txt"),
        )
        .unwrap();
        let plan_of = |name: &str, bytes: &[u8]| {
            let path = tmp.path().join(name);
            std::fs::write(&path, bytes).unwrap();
            plan(name, &path, 1000).unwrap().map(|p| p.pieces.len())
        };
        assert!(plan_of("plain.txt", &transcript).unwrap() > 10);
        let with = |prefix: &[u8], suffix: &[u8]| [prefix, &transcript, suffix].concat();
        // GB18030 for the whole file when any byte is not UTF-8.
        assert_eq!(plan_of("gbk.txt", &with(b"", b"\xb7\xfe\xce\xf1\n")), None);
        assert_eq!(plan_of("bom.txt", &with(b"\xef\xbb\xbf", b"")), None);
        assert_eq!(plan_of("nul.txt", &with(b"", b"\0\n")), None);
        assert_eq!(plan_of("blank.txt", &[b' '; 5000]), None);
        // One block (no prompt at all): nothing to cut.
        let bare: Vec<u8> = transcript
            .split(|&b| b == b'\n')
            .filter(|l| !l.contains(&b'#') && !l.contains(&b'$'))
            .flat_map(|l| [l, b"\n"].concat())
            .collect();
        assert_eq!(plan_of("bare.txt", &bare), None);
    }
}

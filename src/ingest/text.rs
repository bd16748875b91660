//! Turns the bytes of a log file into clean lines: detects binary data, decodes UTF-8 (with or
//! without BOM), UTF-16 with BOM and GBK/GB18030 (common in Chinese lab transcripts), drops CR
//! line ends and strips ANSI colour sequences. Line numbers stay those of the original file.

use encoding_rs::{GB18030, UTF_16BE, UTF_16LE};
use std::borrow::Cow;

/// The decoded text of one input and how it was decoded.
#[derive(Debug, Clone)]
pub struct Decoded<'a> {
    /// The text without CR line ends and ANSI escapes. Borrowed from the input when that is
    /// clean UTF-8 (the common case), so reading a file copies no line.
    pub text: Cow<'a, str>,
    /// `utf-8`, `utf-16le`, `utf-16be` or `gb18030`.
    pub encoding: &'static str,
}

impl Decoded<'_> {
    /// The lines without terminators; index + 1 is the file's line number.
    pub fn lines(&self) -> Vec<&str> {
        // `split('\n')`, with a search of its own (the std searcher is bytewise here).
        let text: &str = &self.text;
        let mut lines = Vec::with_capacity(text.len() / 48 + 1);
        let mut start = 0;
        newlines::each(text.as_bytes(), |end| {
            lines.push(&text[start..end]);
            start = end + 1;
        });
        lines.push(&text[start..]);
        // A final newline does not start another line.
        if lines.last().is_some_and(|l| l.is_empty()) {
            lines.pop();
        }
        lines
    }
}

/// Why a file could not be read as text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TextError {
    Empty,
    /// NUL bytes or many control bytes: not a log. Carries the 1-based line of the first bad byte.
    Binary {
        line: u32,
    },
}

/// Decodes a whole file.
pub fn decode(bytes: &[u8]) -> Result<Decoded<'_>, TextError> {
    if bytes.iter().all(|b| b.is_ascii_whitespace()) {
        return Err(TextError::Empty);
    }
    if let Some(rest) = bytes.strip_prefix(&[0xFF, 0xFE]) {
        return Ok(clean(
            UTF_16LE.decode_without_bom_handling(rest).0,
            "utf-16le",
        ));
    }
    if let Some(rest) = bytes.strip_prefix(&[0xFE, 0xFF]) {
        return Ok(clean(
            UTF_16BE.decode_without_bom_handling(rest).0,
            "utf-16be",
        ));
    }
    if let Some(line) = binary_line(bytes) {
        return Err(TextError::Binary { line });
    }
    let bytes = bytes.strip_prefix(&[0xEF, 0xBB, 0xBF]).unwrap_or(bytes);
    match simdutf8::basic::from_utf8(bytes) {
        Ok(s) => Ok(clean(Cow::Borrowed(s), "utf-8")),
        Err(_) => {
            // Not UTF-8: GB18030 is a superset of GBK/GB2312 and decodes every byte sequence,
            // so it is the right fallback for the Chinese-locale terminals these logs come from.
            let (text, _, _) = GB18030.decode(bytes);
            Ok(clean(text, "gb18030"))
        }
    }
}

/// Decodes text already known to be UTF-8 without BOM (a piece of a large file, see
/// [`super::stream`]) as [`decode`] decodes a whole file of it.
pub fn decode_utf8(text: &str) -> Decoded<'_> {
    clean(Cow::Borrowed(text), "utf-8")
}

/// How many of a file's first bytes [`decode`] counts control bytes in.
pub const HEAD_BYTES: usize = 8192;

/// Whether [`decode`] would call `head` (the first bytes of a file: [`HEAD_BYTES`] of them, or
/// the whole file) binary by its control bytes alone; a NUL anywhere in a file also makes it
/// binary.
pub fn binary_head(head: &[u8]) -> bool {
    binary_line(&head[..head.len().min(HEAD_BYTES)]).is_some()
}

/// Finds the line of the first NUL byte, or of dense control bytes, which mark binary data.
fn binary_line(bytes: &[u8]) -> Option<u32> {
    let line_of = |pos: usize| 1 + bytes[..pos].iter().filter(|&&b| b == b'\n').count() as u32;
    if let Some(pos) = memchr::memchr(0, bytes) {
        return Some(line_of(pos));
    }
    let head = &bytes[..bytes.len().min(HEAD_BYTES)];
    // Counted into a byte per 64 bytes, which the compiler turns into vector compares (a byte
    // at a time took 3 % of an import of small files). Chunks of exactly 64: a chunk of any
    // length took a loop with a tail of its own, and a sum across the vector, every 32 bytes.
    let count = |c: &[u8]| c.iter().fold(0u8, |n, &b| n + u8::from(is_control(b))) as usize;
    let mut chunks = head.chunks_exact(64);
    let control = chunks.by_ref().map(count).sum::<usize>() + count(chunks.remainder());
    if control * 10 > head.len() {
        let pos = head.iter().position(|&b| is_control(b)).unwrap_or(0);
        return Some(line_of(pos));
    }
    None
}

/// A control byte that text does not hold (all but line ends, tabs, form feeds, backspaces
/// and the escapes of colour codes).
#[inline(always)]
fn is_control(b: u8) -> bool {
    b < 0x20 && b != b'\n' && b != b'\r' && b != b'\t' && b != 0x1b && b != 0x0c && b != 0x08
}

/// Drops CRs and ANSI escapes line by line (an unterminated escape ends at its line's end);
/// text that has neither is passed through untouched.
fn clean<'a>(text: Cow<'a, str>, encoding: &'static str) -> Decoded<'a> {
    if memchr::memchr2(0x1b, b'\r', text.as_bytes()).is_none() {
        return Decoded { text, encoding };
    }
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&strip_ansi(line.strip_suffix('\r').unwrap_or(line)));
    }
    Decoded {
        text: Cow::Owned(out),
        encoding,
    }
}

/// Removes ANSI escape sequences (CSI `ESC [ ... letter`, OSC `ESC ] ... BEL`) and stray CRs.
pub fn strip_ansi(line: &str) -> Cow<'_, str> {
    if !line.bytes().any(|b| b == 0x1b || b == b'\r') {
        return Cow::Borrowed(line);
    }
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => match chars.peek() {
                Some('[') => {
                    chars.next();
                    for c in chars.by_ref() {
                        if ('@'..='~').contains(&c) {
                            break;
                        }
                    }
                }
                Some(']') => {
                    chars.next();
                    for c in chars.by_ref() {
                        if c == '\u{7}' {
                            break;
                        }
                    }
                }
                _ => {
                    chars.next();
                }
            },
            '\r' => {}
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

mod newlines;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crlf_and_ansi_are_removed() {
        let d = decode(b"\x1b[1;32m 2   1000  0.1\x1b[0m\r\nnext\r\n").unwrap();
        assert_eq!(d.lines(), vec![" 2   1000  0.1", "next"]);
    }

    #[test]
    fn gbk_is_detected() {
        // "时延测试" encoded as GBK.
        let (gbk, _, _) = encoding_rs::GBK.encode("时延测试\n 2 1000 0.1\n");
        let d = decode(&gbk).unwrap();
        assert_eq!(d.encoding, "gb18030");
        assert_eq!(d.lines()[0], "时延测试");
    }

    #[test]
    fn binary_and_empty_are_rejected() {
        assert_eq!(
            decode(b"ok\nab\x00cd").unwrap_err(),
            TextError::Binary { line: 2 }
        );
        assert_eq!(decode(b"  \n\n").unwrap_err(), TextError::Empty);
        assert_eq!(decode(b"").unwrap_err(), TextError::Empty);
    }

    /// Dense control bytes without a NUL: more than one in ten of the first 8 KiB (counted in
    /// blocks of 64, the last one short) is binary, from the line of the first; text keeps
    /// its tabs, form feeds, backspaces and colour escapes.
    #[test]
    fn dense_control_bytes_are_binary() {
        for b in 0..=255u8 {
            let allowed = matches!(b, b'\n' | b'\r' | b'\t' | 0x1b | 0x0c | 0x08);
            assert_eq!(is_control(b), b < 0x20 && !allowed, "byte {b:#04x}");
        }
        // 1,003 bytes: 101 control bytes is binary, 100 is not.
        let text = |controls: usize| {
            let mut t = b"line one\n".to_vec();
            t.extend(std::iter::repeat_n(b'a', 1003 - 9 - controls));
            t.extend(std::iter::repeat_n(0x01, controls));
            t
        };
        assert_eq!(
            decode(&text(101)).unwrap_err(),
            TextError::Binary { line: 2 }
        );
        assert!(decode(&text(100)).is_ok());
        let allowed = b"\t\x0c\x08\x1b[0m\r\n".repeat(200);
        assert!(decode(&allowed).is_ok());
        // Texts of a block's length and around it, the control bytes at the start, in the
        // last block or past the head: one in ten and one more.
        for len in [10, 63, 64, 65, 127, 128, 129, 8191, 8192, 8193, 9000] {
            let head = len.min(HEAD_BYTES);
            for (at, dense) in [
                (0, head / 10 + 1),
                (0, head / 10),
                (head - head / 10 - 1, head / 10 + 1),
            ] {
                let mut t = vec![b'a'; len];
                t[at..at + dense].fill(0x02);
                let binary = binary_line(&t).is_some();
                assert_eq!(binary, dense * 10 > head, "{len} bytes, {dense} from {at}");
            }
        }
        // Past the head, control bytes do not count.
        let mut t = vec![b'a'; 9000];
        t[HEAD_BYTES..].fill(0x02);
        assert_eq!(binary_line(&t), None);
    }

    #[test]
    fn utf16_with_bom() {
        let mut bytes = vec![0xFF, 0xFE];
        for u in "ib_write_bw\n".encode_utf16() {
            bytes.extend_from_slice(&u.to_le_bytes());
        }
        assert_eq!(decode(&bytes).unwrap().lines(), vec!["ib_write_bw"]);
    }
}

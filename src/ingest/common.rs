//! Small line-reading helpers shared by the tool parsers.

/// Declares regexes compiled on each thread that uses them, used as `NAME.with(|re| …)`.
/// One `Regex` searched on two cores at once costs both: it lends its search cache through a
/// word that the first thread to search writes twice per search and every other thread
/// reads, so the cores keep taking that cache line from each other (an import searches per
/// line). Each thread compiles a regex once, the first time it searches with it.
macro_rules! per_thread_regex {
    ($($(#[$doc:meta])* static $name:ident = $re:expr;)+) => {
        thread_local! {
            $($(#[$doc])* static $name: regex::Regex =
                regex::Regex::new($re).expect(concat!("regex ", stringify!($name)));)+
        }
    };
}
pub(crate) use per_thread_regex;

/// `value` itself for its last user (`last`), a copy for the others: a block's parts that
/// each of its runs carries are copied only when it gives more than one.
pub fn take_or_copy<T: Clone + Default>(value: &mut T, last: bool) -> T {
    if last {
        std::mem::take(value)
    } else {
        value.clone()
    }
}

/// Scans a decimal number at the start of `input` (`2`, `-0.5`, `11403.46`, `1e+06`) and
/// returns it with the rest of the input.
pub fn leading_number(input: &str) -> Option<(&str, &str)> {
    let b = input.as_bytes();
    let mut i = usize::from(b.first() == Some(&b'-'));
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - start
    };
    if digits(&mut i) == 0 {
        return None;
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        digits(&mut i);
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1;
        if matches!(b.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        if digits(&mut j) > 0 {
            i = j;
        }
    }
    Some((&input[..i], &input[i..]))
}

/// A decimal number (`65536`, `11403.46`, `-0.5`, `1e+06`), exactly as `str::parse::<f64>`
/// reads it. Table cells are nearly always plain `digits[.digits]` with few digits; those are
/// worked out here without the general parser (a sixth of a perftest row's cost): an integer
/// mantissa below 2^53 divided by an exact power of ten is correctly rounded by IEEE division,
/// which is the same value the general parser returns (Clinger's fast path).
pub fn decimal(text: &str) -> Option<f64> {
    const POW10: [f64; 16] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
    ];
    let b = text.as_bytes();
    // At most 15 digits: the mantissa stays below 2^53 and the power of ten is exact.
    if !b.is_empty() && b.len() <= 16 {
        let mut mantissa: u64 = 0;
        let mut digits = 0;
        let mut point = None;
        for (i, &c) in b.iter().enumerate() {
            match c {
                b'0'..=b'9' => {
                    mantissa = mantissa * 10 + u64::from(c - b'0');
                    digits += 1;
                }
                b'.' if point.is_none() => point = Some(i),
                _ => return text.parse().ok(),
            }
        }
        let fraction = point.map_or(0, |p| b.len() - p - 1);
        if digits > 0 && digits <= 15 {
            return Some(mantissa as f64 / POW10[fraction]);
        }
    }
    text.parse().ok()
}

/// `hay.find(needle)` for the short needles the parsers look for in a line: the needle's
/// first byte found with `memchr` and the rest compared there. `str::find` and `contains`
/// build a substring searcher per call, which costs more than searching a line.
pub fn find(hay: &str, needle: &str) -> Option<usize> {
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    let Some(&first) = n.first() else {
        return Some(0);
    };
    memchr::memchr_iter(first, h).find(|&at| h[at..].starts_with(n))
}

/// `hay.contains(needle)`, as [`find`] searches.
pub fn has(hay: &str, needle: &str) -> bool {
    find(hay, needle).is_some()
}

/// [`has`] with ASCII letters matched in either case (`needle` in lower case), as
/// `hay.to_ascii_lowercase().contains(needle)` without the copy.
pub fn has_ignore_ascii_case(hay: &str, needle: &str) -> bool {
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    let Some(&first) = n.first() else {
        return true;
    };
    memchr::memchr2_iter(first, first.to_ascii_uppercase(), h).any(|at| {
        h[at..]
            .get(..n.len())
            .is_some_and(|w| w.eq_ignore_ascii_case(n))
    })
}

/// The first eight bytes of `s`, big-endian, zero-padded: ordered as the texts are, except
/// that a shorter text padded with zeros can tie with a longer one (ties need the texts).
pub fn text_head(s: &str) -> u64 {
    match s.as_bytes().first_chunk::<8>() {
        Some(&eight) => u64::from_be_bytes(eight),
        None => s
            .bytes()
            .fold(0u64, |w, b| w << 8 | u64::from(b))
            .checked_shl(8 * (8 - s.len() as u32))
            .unwrap_or(0),
    }
}

/// Whether `line` is empty or whitespace only (`line.trim().is_empty()`), decided at its
/// first byte that is not ASCII whitespace: asked of every line of a block.
pub fn is_blank(line: &str) -> bool {
    line.trim_start_ws().is_empty()
}

/// `str::trim` and its one-sided forms, with ASCII whitespace skipped byte by byte: the
/// parsers trim most lines they read, and `str::trim` decodes every character it looks at.
/// A non-ASCII byte at an end hands the rest to `str::trim` (Unicode's other White_Space).
pub trait TrimWs {
    fn trim_ws(&self) -> &str;
    fn trim_start_ws(&self) -> &str;
    fn trim_end_ws(&self) -> &str;
}

/// ASCII's White_Space: tab, line feed, vertical tab, form feed, carriage return, space
/// (`char::is_whitespace` of an ASCII character).
pub fn is_ascii_ws(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | b' ')
}

impl TrimWs for str {
    fn trim_ws(&self) -> &str {
        self.trim_start_ws().trim_end_ws()
    }

    fn trim_start_ws(&self) -> &str {
        let b = self.as_bytes();
        let skip = b.iter().take_while(|&&c| is_ascii_ws(c)).count();
        let rest = &self[skip..];
        match b.get(skip) {
            Some(c) if !c.is_ascii() => rest.trim_start(),
            _ => rest,
        }
    }

    fn trim_end_ws(&self) -> &str {
        let b = self.as_bytes();
        let keep = b.len() - b.iter().rev().take_while(|&&c| is_ascii_ws(c)).count();
        let rest = &self[..keep];
        match keep.checked_sub(1).map(|i| b[i]) {
            Some(c) if !c.is_ascii() => rest.trim_end(),
            _ => rest,
        }
    }
}

/// Collapses every run of whitespace to one space and trims the ends.
pub fn squash(line: &str) -> String {
    let mut out = String::new();
    squash_into(line, &mut out);
    out
}

/// [`squash`] into `out` (emptied first), for a caller that squashes many lines.
pub fn squash_into(line: &str, out: &mut String) {
    out.clear();
    out.reserve(line.len());
    if line.is_ascii() {
        // The common case, byte by byte (`split_whitespace` decodes every character): the
        // line copied once and its whitespace runs closed up in place, rather than a copy
        // per word.
        let mut b = std::mem::take(out).into_bytes();
        b.extend_from_slice(line.as_bytes());
        let (mut kept, mut space) = (0, false);
        for read in 0..b.len() {
            let c = b[read];
            if is_ascii_ws(c) {
                space = kept > 0;
                continue;
            }
            if space {
                b[kept] = b' ';
                kept += 1;
                space = false;
            }
            b[kept] = c;
            kept += 1;
        }
        b.truncate(kept);
        // ASCII bytes of an ASCII line: always text.
        *out = String::from_utf8(b)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
        return;
    }
    for w in line.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(w);
    }
}

// Byte scanners for the readers that replace a regex on ASCII text (`udp_loss`,
// `iperf2::columns`): each takes a position and gives the end of what it took, `None` where
// the regex's piece would not match.

/// The end of the run of bytes from `from` that `class` takes.
pub fn run(b: &[u8], from: usize, class: impl Fn(u8) -> bool) -> usize {
    from + b[from.min(b.len())..]
        .iter()
        .take_while(|&&c| class(c))
        .count()
}

/// The end of a run of at least one ASCII digit from `from` (`\d+`).
pub fn digits(b: &[u8], from: usize) -> Option<usize> {
    let end = run(b, from, |c| c.is_ascii_digit());
    (end > from).then_some(end)
}

/// The end of at least `least` blanks from `from` (`\s*` or `\s+` on ASCII text).
pub fn blanks(b: &[u8], from: usize, least: usize) -> Option<usize> {
    let end = run(b, from, is_ascii_ws);
    (end >= from + least).then_some(end)
}

/// The end of `word` when it stands at `from`.
pub fn expect(b: &[u8], from: usize, word: &[u8]) -> Option<usize> {
    b.get(from..)?
        .starts_with(word)
        .then_some(from + word.len())
}

/// A printed key in snake case: `Data ex. method` → `data_ex_method`, `ibv_wr* API` →
/// `ibv_wr_api`. Used for banner keys, device facts and iperf header lines.
pub fn snake_key(key: &str) -> String {
    let mut s = String::with_capacity(key.len());
    for w in key.split(|c: char| !c.is_ascii_alphanumeric()) {
        if w.is_empty() {
            continue;
        }
        if !s.is_empty() {
            s.push('_');
        }
        s.extend(w.chars().map(|c| c.to_ascii_lowercase()));
    }
    s
}

#[cfg(test)]
mod tests {
    /// `has` and `has_ignore_ascii_case` answer as `str::contains` does (on a lowered copy for
    /// the second), at every place a needle can start, overlapping or not, in any script.
    #[test]
    fn has_is_contains() {
        let hays = [
            "",
            "a",
            "[SUM]  0.0-10.0 sec",
            "[ 3] local 1.2.3.4 port 5 connected with 6",
            "connect failed: Connection refused",
            "FAILED",
            "Fai",
            "aab",
            "ababac",
            "测试 failed 时延",
            "No Route To Host",
            "x] local ] local y",
        ];
        let needles = [
            "",
            "[SUM]",
            " sec",
            "] local ",
            "failed",
            "refused",
            "no route to host",
            "ab",
            "abac",
            "aab",
            "a",
            "测试",
            "时",
            "host",
        ];
        for hay in hays {
            for needle in needles {
                assert_eq!(
                    super::has(hay, needle),
                    hay.contains(needle),
                    "{hay:?} {needle:?}"
                );
                assert_eq!(
                    super::find(hay, needle),
                    hay.find(needle),
                    "{hay:?} {needle:?}"
                );
                let lower = hay.to_ascii_lowercase();
                let nocase = super::has_ignore_ascii_case(hay, &needle.to_ascii_lowercase());
                assert_eq!(
                    nocase,
                    lower.contains(&needle.to_ascii_lowercase()),
                    "{hay:?} {needle:?}"
                );
            }
        }
    }

    /// Texts that tie within eight bytes, are prefixes of one another, hold zero bytes, are
    /// shorter than eight bytes or not ASCII.
    const TEXTS: [&str; 21] = [
        "",
        "a",
        "ab",
        "ab\0",
        "ab\0\0\0\0\0\0x",
        "abcdefgh",
        "abcdefg",
        "abcdefghi",
        "abcdefgha",
        "abcdefgh\0",
        "tx_depth",
        "tx_depth_2",
        "rx_depth",
        "mtu",
        "gid_index",
        "z",
        "é",
        "\u{ff}",
        "\0",
        "connection_type",
        "connection_typf",
    ];

    /// Where two texts' heads differ they order the texts as `str::cmp` does.
    #[test]
    fn text_head_orders_as_str() {
        for a in TEXTS {
            for b in TEXTS {
                let (ha, hb) = (super::text_head(a), super::text_head(b));
                if ha != hb {
                    assert_eq!(ha.cmp(&hb), a.cmp(b), "{a:?} against {b:?}");
                }
            }
        }
    }

    use super::*;

    #[test]
    fn squash_by_bytes_is_squash_by_words_and_blank_is_trimmed_empty() {
        let by_words = |l: &str| l.split_whitespace().collect::<Vec<_>>().join(" ");
        let mut lines = crate::ingest::fixture_lines_with(&["fixtures"], " ");
        lines.extend(
            [
                "",
                " ",
                "\x0b a\x0b",
                "\t a \x0c b\r",
                " a\u{3000}b ",
                "x\x1fy",
                "\x0b",
            ]
            .map(String::from),
        );
        let mut reused = String::from("left from before");
        for l in &lines {
            assert_eq!(squash(l), by_words(l), "{l:?}");
            squash_into(l, &mut reused);
            assert_eq!(reused, by_words(l), "{l:?}, into a used buffer");
            assert_eq!(is_blank(l), l.trim().is_empty(), "{l:?}");
        }
        for l in lines.iter().map(String::as_str).chain([
            " \u{a0}x\u{85} \u{3000}",
            "\u{3000}",
            "x\u{2009}",
            "\u{1c}x\u{1f}",
            "\x0b\x0c x y \r\n",
            "é ",
            " é",
        ]) {
            assert_eq!(l.trim_ws(), l.trim(), "{l:?}");
            assert_eq!(l.trim_start_ws(), l.trim_start(), "{l:?}");
            assert_eq!(l.trim_end_ws(), l.trim_end(), "{l:?}");
        }
        for l in [
            "\u{3000}",
            " \u{3000}\t",
            "\u{3000}x",
            "\x0b\x0c",
            "\u{85}",
            "\u{a0}",
        ] {
            assert_eq!(is_blank(l), l.trim().is_empty(), "{l:?}");
        }
    }

    #[test]
    fn decimal_reads_every_number_as_the_general_parser_does() {
        let same = |t: &str| {
            let general = t.parse::<f64>().ok().map(f64::to_bits);
            assert_eq!(decimal(t).map(f64::to_bits), general, "{t:?}");
        };
        // Every word of every fixture line, numbers or not.
        for l in crate::ingest::fixture_lines_with(&["fixtures"], "") {
            l.split_whitespace().for_each(same);
        }
        for t in [
            "",
            ".",
            "5.",
            ".5",
            "-0.5",
            "0",
            "00012.500",
            "1e+06",
            "1..2",
            "12a",
            "+3",
            "999999999999999",
            "9999999999999999",
            "0.000000000000001",
            "123456789012345.",
            "1234567.89012345",
            "9007199254740993",
            "inf",
            "NaN",
            "-",
            "4.2.",
            "١٢",
        ] {
            same(t);
        }
        // Digits and points in every arrangement up to 17 characters (a fixed pseudo-random walk).
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let len = 1 + (x % 17) as usize;
            let t: String = (0..len)
                .map(|i| match (x >> (i * 3)) % 11 {
                    10 => '.',
                    d => char::from(b'0' + d as u8),
                })
                .collect();
            same(&t);
        }
    }
}

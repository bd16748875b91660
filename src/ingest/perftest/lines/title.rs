//! The banner title line: `RDMA_Write BW Test`, `Send Bidirectional BW Test`,
//! `Atomic FETCH_AND_ADD Latency Test`.

use crate::ingest::common::{squash, TrimWs};
use std::sync::LazyLock;

/// The parsed test title, e.g. `RDMA_Write BW Test` or `Atomic FETCH_AND_ADD Latency Test`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Title {
    pub text: String,
    /// `send`, `write`, `read`, `atomic`.
    pub verb: &'static str,
    /// `bw` or `lat`.
    pub kind: &'static str,
    pub bidirectional: bool,
}

crate::ingest::common::per_thread_regex! {
    /// What a title is. ASCII lines (every title perftest prints) are read by [`ascii_title`]
    /// instead, to the same effect; a test checks the two agree.
    static TITLE = r"^\s*(Send_imm|Send|RDMA_Write_imm|RDMA_Write|RDMA_Read|Atomic)\b(.*?)\b(BW|Latency)\b(.*)\bTest\s*$";
}

/// The verbs a title starts with, in the regex's order (the longer `_imm` name first).
const VERBS: [&str; 6] = [
    "Send_imm",
    "Send",
    "RDMA_Write_imm",
    "RDMA_Write",
    "RDMA_Read",
    "Atomic",
];

/// Reads the banner title line.
pub fn title(line: &str) -> Option<Title> {
    static TEST: LazyLock<memchr::memmem::Finder<'static>> =
        LazyLock::new(|| memchr::memmem::Finder::new("Test"));
    // Every verb starts with `S`, `R` or `A`: most lines stop at their first letter.
    if !line.trim_start_ws().starts_with(['S', 'R', 'A']) {
        return None;
    }
    TEST.find(line.as_bytes())?;
    let (verb, middle, kind) = if line.is_ascii() {
        ascii_title(line)?
    } else {
        regex_title(line)?
    };
    Some(Title {
        text: squash(line),
        verb: match verb {
            "Send" | "Send_imm" => "send",
            "RDMA_Write" | "RDMA_Write_imm" => "write",
            "RDMA_Read" => "read",
            _ => "atomic",
        },
        kind: if kind == "BW" { "bw" } else { "lat" },
        bidirectional: middle.contains("Bidirectional"),
    })
}

/// `TITLE`'s reading of a line: (verb, the text between verb and kind, kind).
fn regex_title(line: &str) -> Option<(&'static str, &str, &'static str)> {
    let c = TITLE.with(|re| re.captures(line))?;
    let verb = VERBS.into_iter().find(|v| *v == &c[1])?;
    let kind = if &c[3] == "BW" { "BW" } else { "Latency" };
    Some((verb, c.get(2)?.as_str(), kind))
}

/// `TITLE` on an ASCII line, by hand (the regex's lazy middle cost a backtracking search per
/// title): (verb, the text between verb and kind, kind). In ASCII the regex's word characters
/// are `[A-Za-z0-9_]` and its `\s` is ASCII whitespace with the vertical tab.
fn ascii_title(line: &str) -> Option<(&'static str, &str, &'static str)> {
    let t = line.trim_start_ws();
    let b = t.as_bytes();
    let word = |i: usize| {
        b.get(i)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
    };
    let boundary = |i: usize| (i > 0 && word(i - 1)) != word(i);
    // The title must end in `Test` (after a word boundary), whatever comes before.
    let end = t.trim_end_ws();
    let test_at = end.len().checked_sub(4)?;
    if &end[test_at..] != "Test" || !boundary(test_at) {
        return None;
    }
    // Each verb in the order the regex's alternation tries them: the first whose rest matches.
    VERBS
        .into_iter()
        .filter(|v| t.starts_with(v) && boundary(v.len()))
        .find_map(|verb| {
            // The lazy middle: the first `BW` or `Latency` between word boundaries, ending
            // by the `Test` at the end.
            (verb.len()..test_at).find_map(|p| {
                let kind = ["BW", "Latency"]
                    .into_iter()
                    .find(|k| b[p..].starts_with(k.as_bytes()))?;
                let after = p + kind.len();
                (boundary(p) && boundary(after) && after <= test_at)
                    .then(|| (verb, &t[verb.len()..p], kind))
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_read_by_hand_as_the_regex_reads_them() {
        let mut lines = crate::ingest::fixture_lines_with(&["fixtures"], "Test");
        lines.extend(
            [
                "RDMA_Write BW Test",
                "   Send Bidirectional BW Test  ",
                "Atomic FETCH_AND_ADD Latency Test",
                "RDMA_Write_imm BW Test",
                "Send_immBW Test",
                "SendBW Test",
                "Send BWTest",
                "Send BW_Test",
                "Send BW BW Test",
                "Send LatencyBW Latency Test",
                "Send xBW BW Test",
                "RDMA_Read Latency Test\x0b",
                "\x0bRDMA_Read Latency Test",
                "RDMA_Read Latency TestX",
                "RDMA_Read Latency  Tests",
                "RDMA_Read Latency xTest",
                "RDMA_Read Latency-Test",
                "Send BW",
                "Send Test",
                "SendTest",
                "Atomic_x BW Test",
                "Send_imm_x BW Test",
                "RDMA_Write_immy Latency Test",
                "Send BW Test Test",
            ]
            .map(String::from),
        );
        for l in lines.iter().filter(|l| l.is_ascii()) {
            assert_eq!(ascii_title(l), regex_title(l), "{l:?}");
        }
    }

    #[test]
    fn non_ascii_titles_go_to_the_regex() {
        let t = title("Send Bidirectional BW Test\u{3000}").unwrap();
        assert_eq!((t.verb, t.kind, t.bidirectional), ("send", "bw", true));
        assert_eq!(t.text, "Send Bidirectional BW Test");
        assert_eq!(title("Send é BW Test").unwrap().kind, "bw");
        assert_eq!(title("Sendé BW Test"), None);
    }
}

//! Parsers as adapters (as bencher's are): each tool's reader implements [`Parser`], and
//! [`PARSERS`] lists them in the order content detection tries them. Adding a tool is a module
//! and a line here; `ingest::parse_bytes` knows no tool by name.

use super::draft::RunDraft;
use super::file_lines::FileLines;
use super::{command, devinfo, ibping, iperf2, iperf3, perftest, qperf, Problem};
use crate::benchlog::read as bench_log;
use crate::model::{CommandLine, Run, Tool};
use memchr::memmem::Finder;
use std::ops::Range;
use std::sync::LazyLock;

/// One command block of a file, as a parser sees it.
pub struct Block<'a> {
    /// The file as it is stored and reported.
    pub source: &'a str,
    /// The lines of the file (or of the piece being read), by their index in the file:
    /// parsers report line `index + 1`.
    pub lines: FileLines<'a>,
    /// The block's output lines.
    pub range: Range<usize>,
    /// The command typed at the prompt, when the block has one.
    pub command: Option<&'a CommandLine>,
    /// Whether that command names this parser's tool (a banner-less capture is then read by
    /// what the prompt said rather than by content).
    pub named: bool,
}

impl<'a> Block<'a> {
    /// (source, lines, range, command), for parsers written over the four.
    pub fn parts(
        &self,
    ) -> (
        &'a str,
        FileLines<'a>,
        Range<usize>,
        Option<&'a CommandLine>,
    ) {
        (self.source, self.lines, self.range.clone(), self.command)
    }
}

/// A reader of one tool's output.
pub trait Parser: Sync {
    /// The tool family, as [`command::tool_family`] names a program of it.
    fn family(&self) -> Tool;
    /// Whether a block no known command names holds this tool's output.
    fn detect(&self, text: &[&str]) -> bool;
    /// Texts one of which every line [`Parser::detect`] goes by holds (empty: no such list).
    /// A block of prose without any is ruled out by one search of its text
    /// ([`detect`]) rather than by the parser's tests of every line.
    fn markers(&self) -> &'static [&'static str] {
        &[]
    }
    /// Reads a block into run drafts; what it cannot read goes to `problems` with its line.
    fn parse_block(&self, block: &Block, problems: &mut Vec<Problem>) -> Vec<RunDraft>;
    /// Applies what the command line says to a finished run (perftest's flags change units and
    /// roles); most tools read everything from their output.
    fn finish(&self, _run: &mut Run) {}
    /// Whether a block typed with this tool's command that yields no run is a problem. Device
    /// listings (`ibv_devinfo` of a port that is down) are facts, not runs.
    fn reports_empty(&self) -> bool {
        true
    }
    /// Whether detection stops at this parser: its output looks like another tool's too (the
    /// native runner's log looks like perftest tables) and only it must read it.
    fn exclusive(&self) -> bool {
        false
    }
}

/// Declares a tool's adapter `$name` for the module it is called in: `detect` and
/// `parse_block` are that module's functions of the same names; `markers: [...]` after the
/// family gives [`Parser::markers`], and the other trait methods may be given after that.
macro_rules! declare_parser {
    ($name:ident, $family:ident, markers: $markers:expr $(, $($method:tt)*)?) => {
        $crate::ingest::adapter::declare_parser!(
            $name,
            $family,
            fn markers(&self) -> &'static [&'static str] {
                $markers
            }
            $($($method)*)?
        );
    };
    ($name:ident, $family:ident $(, $($method:tt)*)?) => {
        #[doc = concat!("The ", stringify!($family), " adapter.")]
        pub struct $name;

        impl $crate::ingest::adapter::Parser for $name {
            fn family(&self) -> $crate::model::Tool {
                $crate::model::Tool::$family
            }
            fn detect(&self, text: &[&str]) -> bool {
                detect(text)
            }
            fn parse_block(
                &self,
                block: &$crate::ingest::adapter::Block,
                problems: &mut Vec<$crate::ingest::Problem>,
            ) -> Vec<$crate::ingest::RunDraft> {
                parse_block(block, problems)
            }
            $($($method)*)?
        }
    };
}
pub(crate) use declare_parser;

/// Every parser, in detection order: the exclusive ones first, then most specific first.
pub const PARSERS: &[&dyn Parser] = &[
    &bench_log::BenchLog,
    &perftest::Perftest,
    &iperf3::Iperf3,
    &iperf2::Iperf2,
    &qperf::Qperf,
    &ibping::Ibping,
    &devinfo::DevInfo,
];

/// The parser of a tool family.
pub fn parser(family: Tool) -> Option<&'static dyn Parser> {
    PARSERS.iter().copied().find(|p| p.family() == family)
}

/// The parser of the program a command runs.
pub fn for_command(c: &CommandLine) -> Option<&'static dyn Parser> {
    for_program(&c.program)
}

/// The parser of a program (a command's basename).
pub fn for_program(program: &str) -> Option<&'static dyn Parser> {
    command::tool_family(program).and_then(parser)
}

/// The parsers that recognise a block no known command names: an exclusive one alone, else
/// every one that recognises something (a bare capture may mix tools). `span` is the block's
/// text when its lines lie one after another in it ([`FileLines::span`]): a parser none of
/// whose markers it holds cannot recognise any line of it.
pub fn detect(text: &[&str], span: Option<&str>) -> Vec<&'static dyn Parser> {
    detect_among(text, span, |_| true)
}

/// Whether [`detect`] finds a parser that `wanted` accepts; only those parsers (and the
/// exclusive ones, which rule the others out) are tried.
pub fn detects_any(
    text: &[&str],
    span: Option<&str>,
    wanted: impl Fn(&dyn Parser) -> bool,
) -> bool {
    detect_among(text, span, &wanted).iter().any(|p| wanted(*p))
}

/// What [`detect`] finds, less the parsers `tried` turns away (not tested) unless exclusive.
fn detect_among(
    text: &[&str],
    span: Option<&str>,
    tried: impl Fn(&dyn Parser) -> bool,
) -> Vec<&'static dyn Parser> {
    let recognises = |k: usize| may_recognise(k, span) && PARSERS[k].detect(text);
    let exclusive = |k: &usize| PARSERS[*k].exclusive();
    if let Some(k) = (0..PARSERS.len())
        .filter(exclusive)
        .find(|&k| recognises(k))
    {
        return vec![PARSERS[k]];
    }
    (0..PARSERS.len())
        .filter(|k| !exclusive(k) && tried(PARSERS[*k]) && recognises(*k))
        .map(|k| PARSERS[k])
        .collect()
}

/// Whether `span` holds one of the markers of `PARSERS[k]` (or there is no span or no list).
fn may_recognise(k: usize, span: Option<&str>) -> bool {
    // Each parser's markers as searchers built once: building one took as long as searching
    // a block's text with it.
    static FINDERS: LazyLock<Vec<Vec<Finder<'static>>>> = LazyLock::new(|| {
        let finders = |p: &&dyn Parser| p.markers().iter().map(Finder::new).collect();
        PARSERS.iter().map(finders).collect()
    });
    let markers = &FINDERS[k];
    match span {
        Some(text) if !markers.is_empty() => {
            markers.iter().any(|m| m.find(text.as_bytes()).is_some())
        }
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every line a parser's test goes by holds one of its markers: checked over every line
    /// of the fixtures, one at a time and as whole files.
    #[test]
    fn a_line_detection_accepts_holds_a_marker() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let files = crate::pipeline::collect_files(&[root.join("fixtures")]).unwrap();
        let mut accepted = vec![0; PARSERS.len()];
        for file in files {
            let bytes = std::fs::read(&file).unwrap();
            let text = String::from_utf8_lossy(&bytes);
            let lines: Vec<&str> = text.lines().collect();
            for (k, p) in PARSERS.iter().enumerate() {
                let held = |t: &str| p.markers().iter().any(|m| t.contains(m));
                if p.markers().is_empty() {
                    continue;
                }
                if p.detect(&lines) {
                    assert!(held(&text), "{}: {}", file.display(), p.family());
                }
                for l in &lines {
                    if p.detect(&[l]) {
                        assert!(held(l), "{}: {l:?}", p.family());
                        accepted[k] += 1;
                    }
                }
            }
        }
        for (k, p) in PARSERS.iter().enumerate() {
            assert!(p.markers().is_empty() || accepted[k] > 0, "{}", p.family());
        }
    }

    #[test]
    fn detection_with_a_span_finds_what_it_finds_without() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let files = crate::pipeline::collect_files(&[root.join("fixtures")]).unwrap();
        let families = |v: Vec<&dyn Parser>| v.iter().map(|p| p.family()).collect::<Vec<_>>();
        let mut found = 0;
        for file in files {
            let bytes = std::fs::read(&file).unwrap();
            let Ok(text) = std::str::from_utf8(&bytes) else {
                continue;
            };
            let lines: Vec<&str> = text.split('\n').collect();
            let whole = FileLines::whole(&lines).cut_from(text);
            // Every window of 1, 7 and 40 lines.
            for width in [1, 7, 40] {
                for start in 0..lines.len() {
                    let range = start..(start + width).min(lines.len());
                    let span = whole.span(range.clone());
                    assert!(span.is_some());
                    let with = families(detect(&lines[range.clone()], span));
                    found += with.len();
                    // Asked for some families only, detection says what it says of them
                    // when asked for all.
                    for wanted in [&[Tool::DevInfo, Tool::Qperf][..], &[Tool::Perftest]] {
                        let asked = detects_any(&lines[range.clone()], span, |p| {
                            wanted.contains(&p.family())
                        });
                        assert_eq!(asked, with.iter().any(|f| wanted.contains(f)), "{range:?}");
                    }
                    assert_eq!(with, families(detect(&lines[range], None)));
                }
            }
        }
        assert!(found > 1000, "{found}");
    }

    #[test]
    fn every_family_a_command_names_has_a_parser() {
        for program in [
            "ib_write_bw",
            "iperf",
            "iperf3",
            "qperf",
            "ibping",
            "ibv_devinfo",
            "ibstat",
        ] {
            let family = command::tool_family(program).unwrap();
            assert!(parser(family).is_some(), "{program}: {family}");
        }
    }
}

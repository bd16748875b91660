#![allow(dead_code)] // each target uses the checks it needs
//! What every fuzz target asserts beyond "no panic": whatever a parser reports points at a
//! line of its input, and every file ends up as runs or as a reason it yielded none.

use linkperf::ingest::adapter::Block;
use linkperf::ingest::{FileResult, Problem, RunDraft};
use linkperf::model::Run;

/// Lines a problem or a row may name: the file's lines, plus one past the end (a file cut off
/// mid-table is reported where its next line would be).
pub fn line_limit(bytes: &[u8]) -> u32 {
    bytes.iter().filter(|&&b| b == b'\n').count() as u32 + 2
}

pub fn problems_in_range(problems: &[Problem], limit: u32) {
    for p in problems {
        assert!(
            p.line >= 1 && p.line <= limit,
            "problem outside the input: {p}"
        );
        assert!(
            !p.message.is_empty(),
            "problem without a reason at line {}",
            p.line
        );
    }
}

pub fn runs_in_range(runs: &[Run], limit: u32) {
    for run in runs {
        assert!(
            run.line >= 1 && run.line <= limit,
            "run at line {} outside the input",
            run.line
        );
        for m in &run.measurements {
            assert!(
                m.line >= 1 && m.line <= limit,
                "row at line {} outside the input",
                m.line
            );
        }
    }
}

pub fn file_result(result: &FileResult, limit: u32) {
    problems_in_range(&result.problems, limit);
    runs_in_range(&result.runs, limit);
    assert_eq!(
        result.runs.is_empty(),
        result.nothing.is_some(),
        "a file with no run must say why"
    );
}

/// Decodes `bytes` as an import does, reads them as one block with `parse` (as a prompt naming
/// the tool would hand them over), and checks what it reports. Input the import rejects before
/// any parser (empty, binary) is skipped.
pub fn parse_as_block(
    bytes: &[u8],
    parse: impl FnOnce(&Block, &mut Vec<Problem>) -> Vec<RunDraft>,
) {
    let Ok(decoded) = linkperf::ingest::text::decode(bytes) else {
        return;
    };
    let lines = decoded.lines();
    let block = Block {
        source: "fuzz.txt",
        lines: linkperf::ingest::file_lines::FileLines::whole(&lines),
        range: 0..lines.len(),
        command: None,
        named: true,
    };
    let mut problems = Vec::new();
    let drafts = parse(&block, &mut problems);
    problems_in_range(&problems, lines.len() as u32 + 1);
    drafts_in_range(&drafts, lines.len());
}

pub fn drafts_in_range(drafts: &[RunDraft], lines: usize) {
    for d in drafts {
        assert!(
            d.start <= d.end && d.end <= lines,
            "draft outside the input"
        );
    }
}

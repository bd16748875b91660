//! What every parser produces ([`RunDraft`]) and the one place a draft becomes a [`Run`]: its
//! identity (a content hash of its lines), command, host, and the columns derived from facts.

use super::adapter::Parser;
use crate::ingest::file_lines::FileLines;
use crate::model::{CommandLine, Measurement, Role, Run, RunStatus, Tool};
use std::collections::BTreeMap;

/// A stable 128-bit content hash (two FNV-1a 64 lanes with different offsets) used as the run
/// id. It must never change between versions, since stored runs are deduplicated by it; a
/// cryptographic hash is not needed (ids are keys, not signatures) and cost 15 % of import time.
pub struct ContentHash {
    a: u64,
    b: u64,
}

impl ContentHash {
    const PRIME: u64 = 0x0000_0100_0000_01b3;

    pub fn new() -> ContentHash {
        ContentHash {
            a: 0xcbf2_9ce4_8422_2325,
            b: 0x6c62_272e_07bb_0142,
        }
    }

    pub fn update(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.a = (self.a ^ u64::from(byte)).wrapping_mul(Self::PRIME);
            self.b = (self.b ^ u64::from(byte))
                .wrapping_mul(Self::PRIME)
                .rotate_left(5);
        }
    }

    /// 32 hex digits.
    pub fn hex(&self) -> String {
        format!("{:016x}{:016x}", self.a, self.b)
    }
}

impl Default for ContentHash {
    fn default() -> Self {
        Self::new()
    }
}

/// What a parser found for one run, before the run gets its identity and command.
#[derive(Debug, Clone)]
pub struct RunDraft {
    /// False for fragments that turned out not to be a run.
    pub keep: bool,
    /// 0-based line range of the run's output in the file.
    pub start: usize,
    pub end: usize,
    pub tool: Tool,
    /// Test name as the output says (banner title).
    pub test: Option<String>,
    /// Test name guessed from the file name, for banner-less captures.
    pub test_hint: Option<String>,
    /// `bw` or `lat` from the table header, for banner-less captures.
    pub kind_hint: Option<&'static str>,
    pub role: Role,
    pub status: RunStatus,
    pub facts: BTreeMap<String, String>,
    pub notes: Vec<String>,
    pub error: Option<String>,
    pub measurements: Vec<Measurement>,
}

impl RunDraft {
    /// A kept draft of `tool` over `lines` with nothing found yet: parsers fill in the rest
    /// with struct-update syntax.
    pub fn new(tool: Tool, lines: std::ops::Range<usize>) -> RunDraft {
        RunDraft {
            keep: true,
            start: lines.start,
            end: lines.end,
            tool,
            test: None,
            test_hint: None,
            kind_hint: None,
            role: Role::Unknown,
            status: RunStatus::NoResults,
            facts: BTreeMap::new(),
            notes: Vec::new(),
            error: None,
            measurements: Vec::new(),
        }
    }
}

/// How a run ended by what its output held: results, else an error, else nothing.
pub fn status_of(has_rows: bool, has_error: bool) -> RunStatus {
    if has_rows {
        RunStatus::Ok
    } else if has_error {
        RunStatus::Failed
    } else {
        RunStatus::NoResults
    }
}

/// Gives a draft its identity (content hash), command, host and the columns derived from facts.
pub fn finish_run(
    parser: &dyn Parser,
    source: &str,
    lines: FileLines,
    host: Option<String>,
    command: Option<CommandLine>,
    prompt_line: Option<usize>,
    draft: RunDraft,
) -> Run {
    let mut hasher = ContentHash::new();
    // Two runs read from the same lines (qperf tests of one command) differ by test name.
    if let Some(t) = draft.test.as_ref().or(draft.test_hint.as_ref()) {
        hasher.update(t.as_bytes());
        hasher.update(b"\n");
    }
    if let Some(c) = &command {
        hasher.update(c.raw.as_bytes());
        hasher.update(b"\n");
    }
    for l in &lines[draft.start..draft.end.min(lines.end())] {
        hasher.update(l.as_bytes());
        hasher.update(b"\n");
    }
    let run_id = hasher.hex();
    // perftest programs are named after their test (`ib_write_bw`); other tools are not.
    let command_test = command
        .as_ref()
        .filter(|c| {
            draft.tool == Tool::Perftest
                && super::command::tool_family(&c.program) == Some(Tool::Perftest)
        })
        .map(|c| c.program.clone());
    let test = command_test
        .or(draft.test)
        .or(draft.test_hint)
        .unwrap_or_else(|| format!("{}_{}", draft.tool, draft.kind_hint.unwrap_or("unknown")));
    let facts = draft.facts;
    let mtu = facts
        .get("mtu")
        .and_then(|m| m.trim_end_matches("[B]").trim().parse::<u32>().ok());
    // A run typed at a prompt starts at its prompt line.
    let line = prompt_line.unwrap_or(draft.start) as u32 + 1;
    let mut run = Run {
        run_id,
        source: source.to_string(),
        line,
        tool: draft.tool.as_str().to_string(),
        test,
        role: draft.role,
        status: draft.status,
        host,
        device: facts.get("device").cloned(),
        mtu,
        link_layer: facts.get("link_type").cloned(),
        connection_type: facts.get("connection_type").cloned(),
        qps: facts.get("number_of_qps").and_then(|q| q.parse().ok()),
        command,
        facts,
        notes: draft.notes,
        error: draft.error,
        labels: BTreeMap::new(),
        measurements: draft.measurements,
        counters: Vec::new(),
    };
    parser.finish(&mut run);
    run
}

//! Reading logs: decode a file ([`text`]), split it into command blocks ([`transcript`]), hand
//! each block to the parser of its tool ([`perftest`], ...) and turn the drafts into canonical
//! [`Run`]s. nom types never leave this module tree. Everything a parser cannot read becomes a
//! [`Problem`] with file and line.

pub mod command;
pub mod perftest;
pub mod text;
pub mod transcript;

use crate::model::{Measurement, Role, Run, RunStatus};
use std::collections::BTreeMap;
use std::fmt;

/// Something in an input that could not be read, with where and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub source: String,
    pub line: u32,
    pub message: String,
}

impl Problem {
    pub fn new(source: &str, line: u32, message: String) -> Problem {
        Problem {
            source: source.to_string(),
            line,
            message,
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.source, self.line, self.message)
    }
}

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
    pub tool: String,
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

/// Everything read from one file.
#[derive(Debug, Default)]
pub struct FileResult {
    pub runs: Vec<Run>,
    /// Lines or blocks that could not be read.
    pub problems: Vec<Problem>,
    /// Blocks of a known tool that produced no run (counted as unreadable in the summary).
    pub unreadable_blocks: usize,
    /// Blocks of tools this version does not import yet.
    pub unsupported_blocks: Vec<Problem>,
    pub encoding: Option<&'static str>,
}

/// Parses the bytes of one file. `source` is the path as it will be stored and reported.
pub fn parse_bytes(source: &str, bytes: &[u8]) -> FileResult {
    let mut result = FileResult::default();
    let decoded = match text::decode(bytes) {
        Ok(d) => d,
        Err(text::TextError::Empty) => {
            result
                .problems
                .push(Problem::new(source, 1, "empty file".into()));
            result.unreadable_blocks += 1;
            return result;
        }
        Err(text::TextError::Binary { line }) => {
            result.problems.push(Problem::new(
                source,
                line,
                "binary data, not a text log".into(),
            ));
            result.unreadable_blocks += 1;
            return result;
        }
    };
    result.encoding = Some(decoded.encoding);
    let lines = decoded.lines;

    if perftest::json::detect(&lines) {
        match perftest::json::parse(source, &lines) {
            Ok(draft) => {
                let run = finish_run(source, &lines, None, None, None, draft);
                result.runs.push(run);
            }
            Err(p) => {
                result.problems.push(p);
                result.unreadable_blocks += 1;
            }
        }
        return result;
    }

    for block in transcript::split(&lines) {
        let family = block
            .command
            .as_ref()
            .and_then(|c| command::tool_family(&c.program));
        let output = block.output_start..block.end;
        let is_perftest = family == Some("perftest");
        let drafts =
            if is_perftest || (family.is_none() && perftest::detect(&lines[output.clone()])) {
                perftest::parse_block(
                    source,
                    &lines,
                    output.clone(),
                    is_perftest,
                    &mut result.problems,
                )
            } else {
                Vec::new()
            };
        if drafts.is_empty() {
            if let Some(family) = family {
                let cmd = block.command.as_ref().map(|c| c.raw.as_str()).unwrap_or("");
                let has_output = lines[output.clone()].iter().any(|l| !l.trim().is_empty());
                let asks_version = block.command.as_ref().is_some_and(|c| {
                    c.flags.contains_key("version") || c.flags.contains_key("help")
                });
                if family == "perftest" && asks_version {
                    // `ib_write_bw --version` / `--help`: no run, nothing lost.
                } else if family == "perftest" {
                    let why = if has_output {
                        format!("no perftest output recognised after `{cmd}`")
                    } else {
                        format!("`{cmd}` has no output in this log")
                    };
                    result
                        .problems
                        .push(Problem::new(source, block.start as u32 + 1, why));
                    result.unreadable_blocks += 1;
                } else if has_output {
                    result.unsupported_blocks.push(Problem::new(
                        source,
                        block.start as u32 + 1,
                        format!("{family} output (`{cmd}`) is not imported by this version"),
                    ));
                }
            }
            continue;
        }
        let prompt_line = block.command.as_ref().map(|_| block.start);
        for draft in drafts {
            let run = finish_run(
                source,
                &lines,
                block.host.clone(),
                block.command.clone(),
                prompt_line,
                draft,
            );
            result.runs.push(run);
        }
    }
    result
}

/// Gives a draft its identity (content hash), command, host and the columns derived from facts.
fn finish_run(
    source: &str,
    lines: &[String],
    host: Option<String>,
    command: Option<crate::model::CommandLine>,
    prompt_line: Option<usize>,
    draft: RunDraft,
) -> Run {
    let mut hasher = ContentHash::new();
    if let Some(c) = &command {
        hasher.update(c.raw.as_bytes());
        hasher.update(b"\n");
    }
    for l in &lines[draft.start..draft.end.min(lines.len())] {
        hasher.update(l.as_bytes());
        hasher.update(b"\n");
    }
    let run_id = hasher.hex();
    let command_test = command
        .as_ref()
        .filter(|c| command::tool_family(&c.program) == Some(draft.tool.as_str()))
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
        tool: draft.tool,
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
    };
    if run.tool == "perftest" {
        perftest::apply_command(&mut run);
    }
    run
}

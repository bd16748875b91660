//! Reading logs: decode a file ([`text`]), split it into command blocks ([`transcript`]), hand
//! each block to the parser of its tool ([`perftest`], ...) and turn the drafts into canonical
//! [`Run`]s. nom types never leave this module tree. Everything a parser cannot read becomes a
//! [`Problem`] with file and line.

pub mod command;
pub mod common;
pub mod devinfo;
pub mod ibping;
pub mod iperf2;
pub mod iperf3;
pub mod linkperf_bench;
pub mod perftest;
pub mod qperf;
pub mod text;
pub mod transcript;

use crate::model::{Measurement, Role, Run, RunStatus};
use std::collections::{BTreeMap, HashMap};
use std::fmt;

/// Lines of real tool output for tests that check a hand-written reader against the regex it
/// replaced: every line holding `needle` in the files under these folders of the project
/// (folders that are not there, such as `../shared/` outside CI, are skipped).
#[cfg(test)]
pub(crate) fn fixture_lines_with(dirs: &[&str], needle: &str) -> Vec<String> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let dirs: Vec<std::path::PathBuf> = dirs
        .iter()
        .map(|d| root.join(d))
        .filter(|d| d.is_dir())
        .collect();
    let files = crate::pipeline::collect_files(&dirs).expect("fixture folders");
    let mut out = Vec::new();
    for file in files {
        let bytes = std::fs::read(&file).expect("fixture file");
        let text = String::from_utf8_lossy(&bytes);
        out.extend(
            text.lines()
                .filter(|l| l.contains(needle))
                .map(String::from),
        );
    }
    out
}

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
    let lines = decoded.lines();

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
        let command = block.command.as_ref();
        let output = block.output_start..block.end;
        let text = &lines[output.clone()];
        let has_output = text.iter().any(|l| !l.trim().is_empty());
        let named = command.and_then(|c| command::tool_family(&c.program));
        if let (Some(family), Some(c)) = (named, command) {
            if command::asks_version_or_help(family, c) {
                // `ib_write_bw --version`, `iperf -v`: no run, nothing lost.
                continue;
            }
        }
        // A block typed with an unknown command (`cat run.log`) or no prompt is read by content,
        // by every parser that recognises something in it (a bare capture may mix tools).
        let families = match named {
            Some(f) => vec![f],
            None => detect_families(text),
        };
        let mut drafts = Vec::new();
        let problems_before = result.problems.len();
        for family in families {
            let problems = &mut result.problems;
            drafts.extend(match family {
                "perftest" => {
                    perftest::parse_block(source, &lines, output.clone(), named.is_some(), problems)
                }
                "iperf2" => iperf2::parse_block(source, &lines, output.clone(), command, problems),
                "iperf3" => iperf3::parse_block(source, &lines, output.clone(), command, problems),
                "qperf" => qperf::parse_block(source, &lines, output.clone(), command, problems),
                "ibping" => ibping::parse_block(source, &lines, output.clone(), command, problems),
                "devinfo" => {
                    devinfo::parse_block(source, &lines, output.clone(), command, problems)
                }
                "linkperf-verbs" => {
                    linkperf_bench::parse_block(source, &lines, output.clone(), problems)
                }
                _ => Vec::new(),
            });
        }
        let drafts: Vec<RunDraft> = drafts.into_iter().filter(|d| d.keep).collect();
        if drafts.is_empty() {
            if let (Some(family), Some(c)) = (named, command) {
                if family != "devinfo" && result.problems.len() > problems_before {
                    // The parser already said what was wrong with this block.
                    result.unreadable_blocks += 1;
                } else if family != "devinfo" {
                    let why = if has_output {
                        format!("no {family} output recognised after `{}`", c.raw)
                    } else {
                        format!("`{}` has no output in this log", c.raw)
                    };
                    result
                        .problems
                        .push(Problem::new(source, block.start as u32 + 1, why));
                    result.unreadable_blocks += 1;
                }
            }
            continue;
        }
        let prompt_line = command.map(|_| block.start);
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
    attach_device_facts(&mut result.runs);
    attach_qperf_conf(&mut result.runs);
    result
}

/// qperf `conf` describes both hosts (node, CPU, OS, qperf version): copy it onto the qperf runs
/// of the same file under `conf.` keys.
fn attach_qperf_conf(runs: &mut [Run]) {
    let conf: BTreeMap<String, String> = runs
        .iter()
        .filter(|r| r.tool == "qperf" && r.test == "conf")
        .flat_map(|r| r.facts.clone())
        .collect();
    for run in runs
        .iter_mut()
        .filter(|r| r.tool == "qperf" && r.test != "conf")
    {
        for (k, v) in &conf {
            run.facts
                .entry(format!("conf.{k}"))
                .or_insert_with(|| v.clone());
        }
    }
}

/// Which tools printed a block that no known command names, most specific first.
fn detect_families(text: &[&str]) -> Vec<&'static str> {
    type Detector = fn(&[&str]) -> bool;
    // Our own bench logs look like perftest tables; they are read by their own parser only.
    if linkperf_bench::detect(text) {
        return vec!["linkperf-verbs"];
    }
    let detectors: [(&str, Detector); 6] = [
        ("perftest", perftest::detect),
        ("iperf3", iperf3::detect),
        ("iperf2", iperf2::detect),
        ("qperf", qperf::detect),
        ("ibping", ibping::detect),
        ("devinfo", devinfo::detect),
    ];
    detectors
        .iter()
        .filter(|(_, d)| d(text))
        .map(|(f, _)| *f)
        .collect()
}

/// Copies device facts (`ibv_devinfo`, `ibstat`, `rdma link`) onto the benchmark runs of the
/// same file and device, under `device.` keys; a fact already there wins (the first listing).
fn attach_device_facts(runs: &mut [Run]) {
    // One merged listing per (host, device): the first listing of a key wins, as a transcript
    // that lists a device twice describes it first as the runs found it.
    let mut devices: HashMap<(Option<String>, String), BTreeMap<String, String>> = HashMap::new();
    for r in runs.iter().filter(|r| r.tool == "devinfo") {
        let Some(device) = r.device.clone() else {
            continue;
        };
        let merged = devices.entry((r.host.clone(), device)).or_default();
        for (k, v) in &r.facts {
            merged.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
    if devices.is_empty() {
        return;
    }
    for run in runs.iter_mut().filter(|r| r.tool != "devinfo") {
        let Some(device) = run.device.clone() else {
            continue;
        };
        // Same host first; a listing without a host (bare capture) applies to any host; a run
        // without a host takes the listing of any host.
        let mut sources: Vec<&BTreeMap<String, String>> = Vec::new();
        sources.extend(devices.get(&(run.host.clone(), device.clone())));
        if run.host.is_some() {
            sources.extend(devices.get(&(None, device.clone())));
        } else {
            sources.extend(
                devices
                    .iter()
                    .filter(|((_, d), _)| d == &device)
                    .map(|(_, f)| f),
            );
        }
        for facts in sources {
            for (k, v) in facts {
                if !matches!(k.as_str(), "device" | "mtu" | "link_type") {
                    run.facts
                        .entry(format!("device.{k}"))
                        .or_insert_with(|| v.clone());
                }
            }
        }
    }
}

/// Gives a draft its identity (content hash), command, host and the columns derived from facts.
fn finish_run(
    source: &str,
    lines: &[&str],
    host: Option<String>,
    command: Option<crate::model::CommandLine>,
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
    for l in &lines[draft.start..draft.end.min(lines.len())] {
        hasher.update(l.as_bytes());
        hasher.update(b"\n");
    }
    let run_id = hasher.hex();
    // perftest programs are named after their test (`ib_write_bw`); other tools are not.
    let command_test = command
        .as_ref()
        .filter(|c| {
            draft.tool == "perftest" && command::tool_family(&c.program) == Some("perftest")
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

//! What every parser produces ([`RunDraft`]) and the one place a draft becomes a [`Run`]: its
//! identity (a content hash of its lines), command, host, and the columns derived from facts.

use super::adapter::Parser;
use crate::ingest::common::TrimWs;
use crate::ingest::file_lines::FileLines;
use crate::model::{CommandLine, Measurement, Role, Run, RunStatus, Tool};
use std::collections::BTreeMap;

mod wide;

/// A stable 128-bit content hash (two FNV-1a 64 lanes with different offsets) used as the run
/// id. It must never change between versions, since stored runs are deduplicated by it; a
/// cryptographic hash is not needed (ids are keys, not signatures) and cost 15 % of import time.
#[derive(Clone, Copy)]
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
            self.step(byte);
        }
    }

    #[inline(always)]
    fn step(&mut self, byte: u8) {
        self.a = (self.a ^ u64::from(byte)).wrapping_mul(Self::PRIME);
        self.b = (self.b ^ u64::from(byte))
            .wrapping_mul(Self::PRIME)
            .rotate_left(5);
    }

    /// 32 hex digits (lowercase, `a` then `b`, each zero-padded to 16); written digit by
    /// digit: one id a run.
    pub fn hex(&self) -> String {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut out = [0u8; 32];
        for (half, v) in [self.a, self.b].into_iter().enumerate() {
            for (i, d) in out[16 * half..16 * half + 16].iter_mut().enumerate() {
                *d = DIGITS[((v >> (60 - 4 * i)) & 0xf) as usize];
            }
        }
        // One copy of the ASCII bytes (collecting them as chars pushed each one, some
        // thirty instructions a digit).
        std::str::from_utf8(&out)
            .expect("hex digits are ASCII")
            .to_owned()
    }
}

impl Default for ContentHash {
    fn default() -> Self {
        Self::new()
    }
}

/// How many texts [`content_ids`] hashes side by side at most: in vector registers where the
/// CPU has AVX-512 or AVX2 ([`wide`]), else four (their states and texts still fit in the
/// general registers; eight spilled them and were slower than four).
pub const MOST_LANES: usize = wide::MOST_LANES;
const SCALAR_LANES: usize = 4;

/// The ids of `texts` (each [`ContentHash`] of one text, in order), hashed side by side.
pub fn content_ids(texts: &[&[u8]]) -> Vec<String> {
    if wide::available() {
        return wide::hash_texts(texts)
            .iter()
            .map(ContentHash::hex)
            .collect();
    }
    scalar_content_ids(texts)
}

/// [`content_ids`] without vector registers: four lanes of about equal bytes.
fn scalar_content_ids(texts: &[&[u8]]) -> Vec<String> {
    let mut lanes: [Vec<usize>; SCALAR_LANES] = Default::default();
    let mut load = [0; SCALAR_LANES];
    for (k, t) in texts.iter().enumerate() {
        let l = (0..SCALAR_LANES).min_by_key(|&l| load[l]).unwrap_or(0);
        lanes[l].push(k);
        load[l] += t.len();
    }
    let mut out = vec![String::new(); texts.len()];
    // Per lane: which of its texts, how far into it, and its hash so far.
    let mut at = [(0, 0, ContentHash::new()); SCALAR_LANES];
    loop {
        let mut rest: [&[u8]; SCALAR_LANES] = [&[]; SCALAR_LANES];
        let mut open = [0; SCALAR_LANES];
        let mut count = 0;
        for (l, (text, offset, hash)) in at.iter_mut().enumerate() {
            // Texts done (an empty one at once) take their id; the lane moves to its next.
            while let Some(&k) = lanes[l].get(*text) {
                if *offset < texts[k].len() {
                    rest[l] = &texts[k][*offset..];
                    open[count] = l;
                    count += 1;
                    break;
                }
                out[k] = std::mem::take(hash).hex();
                (*text, *offset) = (*text + 1, 0);
            }
        }
        if count == 0 {
            return out;
        }
        // The widest run of lanes that all have text, four, two or one.
        let width = match count {
            4.. => 4,
            2.. => 2,
            _ => 1,
        };
        let open = &open[..width];
        let n = open.iter().map(|&l| rest[l].len()).min().unwrap_or(0);
        match width {
            4 => open_side_by_side::<4>(&mut at, &rest, open, n),
            2 => open_side_by_side::<2>(&mut at, &rest, open, n),
            _ => at[open[0]].2.update(&rest[open[0]][..n]),
        }
        for &l in open {
            at[l].1 += n;
        }
    }
}

/// [`side_by_side`] over the first `W` of the lanes `open` (of [`content_ids`]' lane states
/// `at` and texts left `rest`): each lane's hash on with `n` more bytes.
#[inline]
fn open_side_by_side<const W: usize>(
    at: &mut [(usize, usize, ContentHash); SCALAR_LANES],
    rest: &[&[u8]; SCALAR_LANES],
    open: &[usize],
    n: usize,
) {
    let lanes: [usize; W] = std::array::from_fn(|i| open[i]);
    let hashes = side_by_side(lanes.map(|l| at[l].2), lanes.map(|l| rest[l]), n);
    for (l, h) in lanes.into_iter().zip(hashes) {
        at[l].2 = h;
    }
}

/// `hashes[l]` on with the first `n` bytes of `texts[l]`, the lanes a byte at a time in turn.
#[inline(always)]
// Byte `i` of every lane in one step is the point: the lanes' chains run side by side.
#[allow(clippy::needless_range_loop)]
fn side_by_side<const L: usize>(
    mut hashes: [ContentHash; L],
    texts: [&[u8]; L],
    n: usize,
) -> [ContentHash; L] {
    let texts = texts.map(|t| &t[..n]);
    for i in 0..n {
        for l in 0..L {
            hashes[l].step(texts[l][i]);
        }
    }
    hashes
}

/// What the id of a run is the hash of: its test name (two runs read from the same lines, the
/// qperf tests of one command, differ by it), its command line and its lines.
pub fn id_text(command: Option<&CommandLine>, lines: FileLines, draft: &RunDraft) -> Vec<u8> {
    let lines = &lines[draft.start..draft.end.min(lines.end())];
    let mut text = Vec::with_capacity(lines.iter().map(|l| l.len() + 1).sum::<usize>() + 64);
    if let Some(t) = draft.test.as_ref().or(draft.test_hint.as_ref()) {
        text.extend_from_slice(t.as_bytes());
        text.push(b'\n');
    }
    if let Some(c) = command {
        text.extend_from_slice(c.raw.as_bytes());
        text.push(b'\n');
    }
    for l in lines {
        text.extend_from_slice(l.as_bytes());
        text.push(b'\n');
    }
    text
}

/// Run ids worked out a batch at a time ([`content_ids`]): the texts of a file's runs wait until
/// they add up to [`Ids::BATCH`] bytes, so memory holds that much text plus one run's; what is
/// left at the file's end is hashed by [`give_ids`], with other files' runs ([`Ids::unhashed`]).
#[derive(Default)]
pub struct Ids {
    waiting: Vec<(usize, Vec<u8>)>,
    bytes: usize,
}

impl Ids {
    const BATCH: usize = 1 << 20;

    /// Gives `runs[index]` the id of `text`, now or with the next batch.
    pub fn add(&mut self, runs: &mut [Run], index: usize, text: Vec<u8>) {
        self.bytes += text.len();
        self.waiting.push((index, text));
        if self.bytes >= Self::BATCH {
            self.flush(runs);
        }
    }

    /// The texts of the runs still waiting their ids (less than a batch), for [`give_ids`]
    /// to hash with other files' runs.
    pub fn unhashed(self) -> Unhashed {
        Unhashed(self.waiting)
    }

    fn flush(&mut self, runs: &mut [Run]) {
        let texts: Vec<&[u8]> = self.waiting.iter().map(|(_, t)| t.as_slice()).collect();
        for ((index, _), id) in self.waiting.iter().zip(content_ids(&texts)) {
            runs[*index].run_id = id;
        }
        self.waiting.clear();
        self.bytes = 0;
    }
}

/// The texts of a file's runs whose ids are not worked out yet: (index in its runs, text).
#[derive(Debug, Default)]
pub struct Unhashed(Vec<(usize, Vec<u8>)>);

impl Unhashed {
    /// How many runs wait for their ids.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Gives the runs of several files their ids in one [`content_ids`] call. A small file has
/// one run, whose hash alone leaves a lane idle: hashed with the next files' runs, it fills
/// it (the ids are the same, each the hash of its own text).
pub fn give_ids<'a>(files: impl IntoIterator<Item = (&'a mut [Run], Unhashed)>) {
    let files: Vec<(&mut [Run], Unhashed)> = files.into_iter().collect();
    let texts: Vec<&[u8]> = files
        .iter()
        .flat_map(|(_, u)| u.0.iter().map(|(_, t)| t.as_slice()))
        .collect();
    let mut ids = content_ids(&texts).into_iter();
    for (runs, unhashed) in files {
        for ((index, _), id) in unhashed.0.iter().zip(ids.by_ref()) {
            runs[*index].run_id = id;
        }
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
    pub facts: crate::model::Facts,
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
    hasher.update(&id_text(command.as_ref(), lines, &draft));
    let mut run = finish_run_without_id(parser, source, host, command, prompt_line, draft);
    run.run_id = hasher.hex();
    run
}

/// [`finish_run`] without an id: one [`Ids`] gives it (from [`id_text`]), or none for a run
/// read only for its facts.
pub fn finish_run_without_id(
    parser: &dyn Parser,
    source: &str,
    host: Option<String>,
    command: Option<CommandLine>,
    prompt_line: Option<usize>,
    draft: RunDraft,
) -> Run {
    // perftest programs are named after their test (`ib_write_bw`); other tools are not.
    let command_test = command
        .as_ref()
        .filter(|c| {
            draft.tool == Tool::Perftest
                && super::command::tool_family(&c.program) == Some(Tool::Perftest)
        })
        .map(|c| c.program.to_string());
    let test = command_test
        .or(draft.test)
        .or(draft.test_hint)
        .unwrap_or_else(|| format!("{}_{}", draft.tool, draft.kind_hint.unwrap_or("unknown")));
    let facts = draft.facts;
    let mtu = facts.get("mtu").and_then(|m| {
        // `trim_end_matches("[B]")` without a substring searcher per run.
        let mut m = m.as_str();
        while let Some(rest) = m.strip_suffix("[B]") {
            m = rest;
        }
        m.trim_ws().parse::<u32>().ok()
    });
    // A run typed at a prompt starts at its prompt line.
    let line = prompt_line.unwrap_or(draft.start) as u32 + 1;
    let mut run = Run {
        run_id: String::new(),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn alone(text: &[u8]) -> String {
        let mut h = ContentHash::new();
        h.update(text);
        h.hex()
    }

    /// Pseudo-random numbers from `seed` (xorshift): the same texts on every run of a test.
    pub(super) fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
        move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        }
    }

    /// The digits are `format!`'s: zero-padded lowercase hex of each half.
    #[test]
    fn hex_is_both_halves_zero_padded() {
        let mut next = xorshift(0x1234_5678_9abc_def1);
        for (a, b) in [(0, 0), (u64::MAX, 1), (0xf, 0xf << 60)]
            .into_iter()
            .chain((0..100).map(|_| (next(), next() >> (next() % 64))))
        {
            let h = ContentHash { a, b };
            assert_eq!(h.hex(), format!("{a:016x}{b:016x}"));
        }
    }

    /// Every text gets the id it gets hashed alone, whatever the others beside it: none, one,
    /// fewer than the lanes, several a lane, empty ones, equal lengths, one much longer than
    /// the rest.
    #[test]
    fn ids_side_by_side_are_the_ids_hashed_alone() {
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
        assert!(content_ids(&[]).is_empty());
        assert!(scalar_content_ids(&[]).is_empty());
        assert_eq!(content_ids(&[b"ab"]), vec![alone(b"ab")]);
        for case in 0..400 {
            let count = (next() % 40) as usize;
            let texts: Vec<Vec<u8>> = (0..count)
                .map(|k| {
                    let len = match (case + k) % 5 {
                        0 => 0,
                        1 => 7,
                        // Around the vector's eight bytes: lanes that end within a word.
                        2 => (next() % 24) as usize,
                        3 => (next() % 300) as usize,
                        _ => (next() % 5000) as usize,
                    };
                    (0..len).map(|_| next() as u8).collect()
                })
                .collect();
            let refs: Vec<&[u8]> = texts.iter().map(Vec::as_slice).collect();
            let want: Vec<String> = refs.iter().map(|t| alone(t)).collect();
            assert_eq!(content_ids(&refs), want, "case {case}");
            // The four lanes of a CPU without the vector registers, tested on every CPU.
            assert_eq!(scalar_content_ids(&refs), want, "case {case}, scalar");
        }
    }
}

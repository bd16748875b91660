//! Line-level parsers for perftest text output: banner key/value lines, address lines, table
//! headers and result rows. Each function reads one line; whitespace is matched loosely because
//! copies from web pages collapse perftest's column padding and TABs to single spaces.

use crate::ingest::common::{snake_key, TrimWs};
use crate::model::Word;
use crate::units::BwUnit;
use nom::bytes::complete::{tag, take_while1};
use nom::character::complete::{digit1, space0};
use nom::sequence::preceded;
use nom::{IResult, Parser};
use std::sync::LazyLock;

/// A line of at least 20 dashes (perftest's `RESULT_LINE` is 87 or 163, older builds 66); text
/// glued after the dashes by a careless copy is ignored.
pub fn is_rule(line: &str) -> bool {
    // Asked of every line: refused at its first character before twenty bytes are compared
    // (a call to `memcmp`).
    let t = line.trim_start_ws();
    t.starts_with('-') && t.starts_with("--------------------")
}

/// `* Waiting for client to connect... *` or the rdma_cm variant.
pub fn is_waiting(line: &str) -> bool {
    // Asked of most lines of a log, which are short: the lines' few capital Ws are looked at,
    // where a prebuilt substring search spent more on starting than on searching.
    const PREFIX: &[u8] = b"Waiting for client ";
    let b = line.as_bytes();
    memchr::memchr_iter(b'W', b).any(|at| {
        b[at..].strip_prefix(PREFIX).is_some_and(|rest| {
            rest.starts_with(b"to connect") || rest.starts_with(b"rdma_cm QP to connect")
        })
    })
}

/// The star lines around the waiting box.
pub fn is_star_rule(line: &str) -> bool {
    // Most lines are refused at their first character, before their end is trimmed.
    let t = line.trim_start_ws();
    if !t.starts_with('*') {
        return false;
    }
    let t = t.trim_end_ws();
    t.len() >= 10 && t.bytes().all(|c| c == b'*')
}

/// A `^C` typed into the terminal (possibly with output glued after it).
pub fn is_interrupt(line: &str) -> bool {
    line.trim_start_ws().starts_with("^C")
}

mod row;
mod title;
pub use row::{recycle, row, row_in, Cell, Row};
pub use title::{title, Title};

/// Banner keys perftest prints (`ctx_print_test_info`), across versions.
const BANNER_KEYS: &[&str] = &[
    "Dual-port",
    "Device",
    "Number of qps",
    "Transport type",
    "Connection type",
    "Using SRQ",
    "PCIe relax order",
    "Lock-free",
    "ibv_wr* API",
    "Using DDP",
    "Using Enhanced Reorder",
    "TX depth",
    "RX depth",
    "Post List",
    "Recv Post List",
    "DCS num streams",
    "CQ Moderation",
    "CQE Poll Batch",
    "Buffer size",
    "Mtu",
    "Link type",
    "GID index2",
    "GID index",
    "Max inline data",
    "Outstand reads",
    "rdma_cm QPs",
    "Data ex. method",
    "TOS",
    "Use ROCm memory",
    "Use MUSA memory",
    "Use CUDA memory",
    "NUMA node",
];

/// Keys that perftest prints in the second column of a two-column banner line.
const SECOND_COLUMN_KEYS: &[&str] = &[
    "Device",
    "Transport type",
    "Using SRQ",
    "Lock-free",
    "Using DDP",
    "Using Enhanced Reorder",
    "TOS",
];

/// If `text` starts with `key` followed by optional space and a colon, returns the rest after
/// the colon.
fn after_key<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    let rest = text.strip_prefix(key)?;
    let rest = rest.strip_prefix(' ').unwrap_or(rest);
    rest.strip_prefix(':')
}

/// Reads a banner line into (key, value) pairs: `Dual-port : OFF Device : mrdma0` gives two.
/// Keys are returned in snake case (`dual_port`, `data_ex_method`).
pub fn banner_pairs(line: &str) -> Option<Vec<(Word, String)>> {
    let mut pairs = Vec::with_capacity(2);
    banner_pairs_into(line, &mut pairs).map(|()| pairs)
}

/// [`banner_pairs`] added to `out` in order (a run's facts: no vector a line); `None`, and
/// nothing added, for a line that is not a banner line.
pub fn banner_pairs_into(line: &str, out: &mut impl Extend<(Word, String)>) -> Option<()> {
    // Asked of every banner line and of most prose: the cheap refusals first (no colon, no key
    // whose first word starts the line) before squashing (which allocates). A key's first
    // word holds no space, so squashing keeps it.
    // Each key with its first word, split once, grouped by their first byte (in the table's
    // order within a group: the first key that matches wins): a line's candidates are its
    // lead byte's group, not a pass over every key.
    static KEYS: LazyLock<Vec<(&'static str, &'static str)>> = LazyLock::new(|| {
        let first_word = |k: &'static str| k.split(' ').next().unwrap_or(k);
        let mut keys: Vec<_> = BANNER_KEYS.iter().map(|k| (*k, first_word(k))).collect();
        keys.sort_by_key(|(k, _)| k.as_bytes()[0]);
        keys
    });
    static GROUPS: LazyLock<[(u8, u8); 256]> = LazyLock::new(|| {
        let mut groups = [(0, 0); 256];
        for (i, (k, _)) in KEYS.iter().enumerate() {
            let g = &mut groups[k.as_bytes()[0] as usize];
            *g = if g.0 == g.1 {
                (i as u8, i as u8 + 1)
            } else {
                (g.0, i as u8 + 1)
            };
        }
        groups
    });
    let first = line.trim_start_ws();
    let &lead = first.as_bytes().first()?;
    let (from, to) = GROUPS[lead as usize];
    let candidates = || KEYS[from as usize..to as usize].iter();
    if memchr::memchr(b':', line.as_bytes()).is_none()
        || !candidates().any(|(_, word)| first.starts_with(word))
    {
        return None;
    }
    // Copies from web pages collapse perftest's padding and TABs anyway: match that form,
    // squashed into this thread's buffer (every banner line comes here).
    thread_local! {
        static SQUASHED: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
    }
    SQUASHED.with_borrow_mut(|text| {
        crate::ingest::common::squash_into(line, text);
        let (key, mut rest) = candidates().find_map(|(k, _)| Some((*k, after_key(text, k)?)))?;
        let mut key = key;
        while let Some((i, next_key, next_rest)) = second_column(rest) {
            out.extend([(banner_snake_key(key), rest[..i].trim_ws().to_string())]);
            key = next_key;
            rest = next_rest;
        }
        out.extend([(banner_snake_key(key), rest.trim_ws().to_string())]);
        Some(())
    })
}

/// A banner key's fact name ([`snake_key`]), worked out once per key rather than per line, and
/// borrowed by every run's facts rather than copied into each.
fn banner_snake_key(key: &str) -> Word {
    const COUNT: usize = BANNER_KEYS.len() + SECOND_COLUMN_KEYS.len();
    // The table inline in the static, its names in one block of their own
    // ([`crate::model::shared_text`]): every core reads them for every run.
    static NAMES: LazyLock<[(&'static str, &'static str); COUNT]> = LazyLock::new(|| {
        let keys = || BANNER_KEYS.iter().chain(SECOND_COLUMN_KEYS);
        let snake: Vec<String> = keys().map(|k| snake_key(k)).collect();
        let all = crate::model::shared_text(&snake.concat());
        let mut names = [("", ""); COUNT];
        let mut at = 0;
        for ((slot, key), name) in names.iter_mut().zip(keys()).zip(&snake) {
            *slot = (*key, &all[at..at + name.len()]);
            at += name.len();
        }
        names
    });
    // `key` is one of the tables' own texts: found by address, without comparing text (any
    // other key would get the same name worked out here).
    NAMES
        .iter()
        .find(|(k, _)| std::ptr::eq(*k, key))
        .map_or_else(|| snake_key(key).into(), |(_, name)| (*name).into())
}

/// Which bytes start one of `keys`.
fn first_bytes<'k>(keys: impl IntoIterator<Item = &'k str>) -> [bool; 256] {
    let mut table = [false; 256];
    for k in keys {
        table[k.as_bytes()[0] as usize] = true;
    }
    table
}

/// Where the value of a banner pair ends because a second-column key starts (" Device :",
/// " TOS :"): (the space before it, the key, the text after its colon).
fn second_column(rest: &str) -> Option<(usize, &'static str, &str)> {
    static FIRST_BYTES: LazyLock<[bool; 256]> =
        LazyLock::new(|| first_bytes(SECOND_COLUMN_KEYS.iter().copied()));
    let bytes = rest.as_bytes();
    memchr::memchr_iter(b' ', bytes)
        .filter(|&i| bytes.get(i + 1).is_some_and(|&b| FIRST_BYTES[b as usize]))
        .find_map(|i| {
            let tail = &rest[i + 1..];
            SECOND_COLUMN_KEYS
                .iter()
                .find_map(|k| Some((i, *k, after_key(tail, k)?)))
        })
}

/// `local address: LID 0000 QPN 0x000d PSN 0x98dc41` → ("local", rest).
pub fn address(line: &str) -> Option<(&'static str, String)> {
    let t = line.trim_ws();
    let side = if t.starts_with("local address:") {
        "local"
    } else if t.starts_with("remote address:") {
        "remote"
    } else {
        return None;
    };
    let rest = t.split_once(':').map(|(_, r)| r.trim_ws().to_string())?;
    Some((side, rest))
}

/// `GID: 00:00:...:01:20` → the GID text.
pub fn gid(line: &str) -> Option<String> {
    let t = line.trim_ws();
    let rest = t.strip_prefix("GID:").or_else(|| t.strip_prefix("MGID:"))?;
    Some(rest.trim_ws().to_string())
}

/// A bandwidth column's unit: the label perftest printed, resolved once when the header is
/// read (`None` for a label perftest does not print, which makes each row a problem).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BwLabel {
    pub label: String,
    pub unit: Option<BwUnit>,
}

impl From<String> for BwLabel {
    fn from(label: String) -> BwLabel {
        BwLabel {
            unit: BwUnit::from_perftest_label(&label),
            label,
        }
    }
}

impl From<&str> for BwLabel {
    fn from(label: &str) -> BwLabel {
        BwLabel::from(label.to_string())
    }
}

/// One column of a result table header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Column {
    Bytes,
    Iterations,
    Sl,
    BwPeak(BwLabel),
    BwAvg(BwLabel),
    MsgRate,
    BwPort1(BwLabel),
    MsgRatePort1,
    BwPort2(BwLabel),
    MsgRatePort2,
    CpuUtil,
    TMin,
    TMax,
    TTypical,
    TAvg,
    TStdev,
    P99,
    P999,
    Tps,
}

/// If `text` starts with `words` separated by whitespace (one or more characters, as a web
/// copy may collapse or widen it), returns the rest.
fn words_prefix<'a>(text: &'a str, words: &[&str]) -> Option<&'a str> {
    let mut rest = text.strip_prefix(words[0])?;
    for w in &words[1..] {
        let trimmed = rest.trim_start_ws();
        if trimmed.len() == rest.len() {
            return None;
        }
        rest = trimmed.strip_prefix(w)?;
    }
    Some(rest)
}

/// A bracketed unit that `words_prefix` stopped before: `Gb/sec]...` → (`Gb/sec`, rest).
fn unit_until_bracket(text: &str) -> Option<(String, &str)> {
    let end = text.find(']')?;
    (end > 0).then(|| (text[..end].to_string(), &text[end + 1..]))
}

/// How a header column is made from the text it matched.
enum Make {
    Fixed(Column),
    /// Words that end in `[`, then a unit up to `]`.
    WithUnit(fn(BwLabel) -> Column),
}

/// Header columns, in the order they are tried at one position: the first that matches wins
/// (`MsgRate Port1[Mpps]` before `MsgRate[Mpps]`).
const COLUMNS: &[(&[&str], Make)] = &[
    (&["#bytes"], Make::Fixed(Column::Bytes)),
    (&["#iterations"], Make::Fixed(Column::Iterations)),
    (&["#sl"], Make::Fixed(Column::Sl)),
    (&["BW", "peak["], Make::WithUnit(Column::BwPeak)),
    (&["BW", "average["], Make::WithUnit(Column::BwAvg)),
    (&["BW", "Port1["], Make::WithUnit(Column::BwPort1)),
    (
        &["MsgRate", "Port1[Mpps]"],
        Make::Fixed(Column::MsgRatePort1),
    ),
    (&["BW", "Port2["], Make::WithUnit(Column::BwPort2)),
    (
        &["MsgRate", "Port2[Mpps]"],
        Make::Fixed(Column::MsgRatePort2),
    ),
    (&["MsgRate[Mpps]"], Make::Fixed(Column::MsgRate)),
    (&["CPU_Util[%]"], Make::Fixed(Column::CpuUtil)),
    (&["t_min[usec]"], Make::Fixed(Column::TMin)),
    (&["t_max[usec]"], Make::Fixed(Column::TMax)),
    (&["t_typical[usec]"], Make::Fixed(Column::TTypical)),
    (&["t_avg[usec]"], Make::Fixed(Column::TAvg)),
    (&["t_stdev[usec]"], Make::Fixed(Column::TStdev)),
    (&["99%", "percentile[usec]"], Make::Fixed(Column::P99)),
    (&["99.9%", "percentile[usec]"], Make::Fixed(Column::P999)),
    (&["tps", "average"], Make::Fixed(Column::Tps)),
];

/// The header column starting at `text`, if any, and the text after it.
fn column_at(text: &str) -> Option<(Column, &str)> {
    let first = *text.as_bytes().first()?;
    // Only the columns that start with this byte are compared (`memcmp` each): a header's
    // `t` and `B` positions asked all twenty.
    COLUMNS.iter().find_map(|(words, make)| {
        if words[0].as_bytes()[0] != first {
            return None;
        }
        let rest = words_prefix(text, words)?;
        match make {
            Make::Fixed(col) => Some((col.clone(), rest)),
            Make::WithUnit(col) => {
                let (unit, rest) = unit_until_bracket(rest)?;
                Some((col(BwLabel::from(unit)), rest))
            }
        }
    })
}

/// Reads a table header (`#bytes #iterations BW peak[Gb/sec] ...`) into its columns. Text
/// between known columns is skipped.
pub fn header(line: &str) -> Option<Vec<Column>> {
    let mut text = line.trim_start_ws();
    if !text.starts_with("#bytes") {
        return None;
    }
    // The first bytes columns start with: other positions skip `column_at`'s prefix tests.
    static STARTS: LazyLock<[bool; 256]> =
        LazyLock::new(|| first_bytes(COLUMNS.iter().map(|(words, _)| words[0])));
    let mut cols = Vec::new();
    while let Some(c) = text.chars().next() {
        if !STARTS[text.as_bytes()[0] as usize] {
            text = &text[c.len_utf8()..];
            continue;
        }
        match column_at(text) {
            Some((col, rest)) => {
                cols.push(col);
                text = rest;
            }
            None => text = &text[c.len_utf8()..],
        }
    }
    (cols.len() >= 2 && cols[0] == Column::Bytes).then_some(cols)
}

/// `#, usec` / `#, cycles`: the header of `-H`/`-U` raw latency samples; returns the unit.
pub fn sample_header(line: &str) -> Option<&'static str> {
    match line.trim_ws() {
        "#, usec" => Some("usec"),
        "#, cycles" => Some("cycles"),
        _ => None,
    }
}

/// `17, 1.93`: one raw latency sample (`"%d, %g"`), as its 1-based index and value.
pub fn sample(line: &str) -> Option<(u64, f64)> {
    let p: IResult<&str, (&str, &str, &str, &str)> = (
        preceded(space0, digit1),
        tag(","),
        space0,
        take_while1(|c: char| c.is_ascii_digit() || ".e+-".contains(c)),
    )
        .parse(line);
    match p {
        Ok((rest, (index, _, _, value))) if rest.trim_ws().is_empty() => {
            Some((index.parse().ok()?, value.parse().ok()?))
        }
        _ => None,
    }
}

/// Is this line one raw latency sample?
pub fn is_sample(line: &str) -> bool {
    // Asked of every table row, which holds no comma.
    memchr::memchr(b',', line.as_bytes()).is_some() && sample(line).is_some()
}

/// Warnings perftest (or the host) prints between output lines. Returns true for lines that are
/// known not to be data: they are kept as notes on the run.
pub fn is_warning(line: &str) -> bool {
    let t = line.trim_ws();
    const PREFIXES: &[&str] = &[
        "Conflicting CPU frequency values detected",
        "Correlation coefficient",
        "Test integrity may be harmed",
        "Device not recognized to implement inline feature",
        "WARNING",
        "Warning",
        "Your system is not activated",
        "Requested mtu is higher than active mtu",
        "Changing to active mtu",
        "Invalid MTU",
        "Please choose mtu",
        "Will run with the port active mtu",
        "Number of outstanding reads is above max",
        "Changing to that max value",
        "out_reads is greater than remote",
        "Perftest doesn't supports device memory",
        "Client closed connection",
        "Please run the same command with the IB/RoCE interface IP",
        "MAC attached",
        "spec_info",
    ];
    PREFIXES.iter().any(|p| t.starts_with(p))
}

/// Error lines perftest prints instead of results (section 1.7 of FORMATS.md).
pub fn is_error(line: &str) -> bool {
    let t = line.trim_ws();
    const PREFIXES: &[&str] = &[
        "Couldn't connect",
        "Couldn't listen",
        "Couldn't post",
        "Couldn't get",
        "Unable to",
        "accept() failed",
        "Did not detect devices",
        "If device exists",
        "No IB devices found",
        "IB device",
        "Port number",
        "Link layer on port",
        "Failed to",
        "Failed status",
        "Found Incompatibility issue",
        "Completion with error",
        "poll CQ failed",
        "Did not get Message",
        "Error:",
        "Parser function exited with Error",
        "Current implementation is not compatible",
        "Can't produce a report",
        "scnt=",
        "rcnt=",
        "Total Received=",
        "Invalid Command",
    ];
    PREFIXES.iter().any(|p| t.starts_with(p)) || crate::ingest::common::has(t, " mismatch: local=")
}

#[cfg(test)]
mod tests;

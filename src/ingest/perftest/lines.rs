//! Line-level parsers for perftest text output: banner key/value lines, address lines, table
//! headers and result rows. Each function reads one line; whitespace is matched loosely because
//! copies from web pages collapse perftest's column padding and TABs to single spaces.

use crate::ingest::common::snake_key;
use nom::branch::alt;
use nom::bytes::complete::{tag, tag_no_case, take_while1};
use nom::character::complete::{char, digit1, space0};
use nom::combinator::{opt, recognize};
use nom::sequence::{preceded, terminated};
use nom::{IResult, Parser};
use regex::Regex;
use std::sync::LazyLock;

/// A line of at least 20 dashes (perftest's `RESULT_LINE` is 87 or 163, older builds 66); text
/// glued after the dashes by a careless copy is ignored.
pub fn is_rule(line: &str) -> bool {
    line.trim_start().starts_with("--------------------")
}

/// `* Waiting for client to connect... *` or the rdma_cm variant.
pub fn is_waiting(line: &str) -> bool {
    line.contains("Waiting for client to connect")
        || line.contains("Waiting for client rdma_cm QP to connect")
}

/// The star lines around the waiting box.
pub fn is_star_rule(line: &str) -> bool {
    let t = line.trim();
    t.len() >= 10 && t.chars().all(|c| c == '*')
}

/// A `^C` typed into the terminal (possibly with output glued after it).
pub fn is_interrupt(line: &str) -> bool {
    line.trim_start().starts_with("^C")
}

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

static TITLE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*(Send_imm|Send|RDMA_Write_imm|RDMA_Write|RDMA_Read|Atomic)\b(.*?)\b(BW|Latency)\b(.*)\bTest\s*$")
        .expect("title regex")
});

/// Reads the banner title line.
pub fn title(line: &str) -> Option<Title> {
    if !line.contains("Test") {
        return None;
    }
    let c = TITLE.captures(line)?;
    let verb = match &c[1] {
        "Send" | "Send_imm" => "send",
        "RDMA_Write" | "RDMA_Write_imm" => "write",
        "RDMA_Read" => "read",
        _ => "atomic",
    };
    let kind = if &c[3] == "BW" { "bw" } else { "lat" };
    Some(Title {
        text: line.split_whitespace().collect::<Vec<_>>().join(" "),
        verb,
        kind,
        bidirectional: c[2].contains("Bidirectional"),
    })
}

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

/// The first word of each banner key, for a cheap first look at a line.
static BANNER_FIRST_WORDS: LazyLock<Vec<&'static str>> = LazyLock::new(|| {
    let mut words: Vec<&'static str> = BANNER_KEYS
        .iter()
        .map(|k| k.split(' ').next().unwrap_or(k))
        .collect();
    words.dedup();
    words
});

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
pub fn banner_pairs(line: &str) -> Option<Vec<(String, String)>> {
    if !line.as_bytes().contains(&b':') {
        return None;
    }
    // Most lines that reach here are not banner lines: look at the first word before
    // squashing (which allocates). A key's first word holds no space, so squashing keeps it.
    let first = line.trim_start();
    if !BANNER_FIRST_WORDS.iter().any(|w| first.starts_with(w)) {
        return None;
    }
    // Copies from web pages collapse perftest's padding and TABs anyway: match that form.
    let text = crate::ingest::common::squash(line);
    let (key, mut rest) = BANNER_KEYS
        .iter()
        .find_map(|k| Some((*k, after_key(&text, k)?)))?;
    let mut out = Vec::with_capacity(2);
    let mut key = key;
    loop {
        // The value ends where a second-column key starts (" Device :", " TOS :").
        let next = rest.match_indices(' ').find_map(|(i, _)| {
            let tail = &rest[i + 1..];
            SECOND_COLUMN_KEYS
                .iter()
                .find_map(|k| Some((i, *k, after_key(tail, k)?)))
        });
        match next {
            Some((i, next_key, next_rest)) => {
                out.push((snake_key(key), rest[..i].trim().to_string()));
                key = next_key;
                rest = next_rest;
            }
            None => {
                out.push((snake_key(key), rest.trim().to_string()));
                return Some(out);
            }
        }
    }
}

/// `local address: LID 0000 QPN 0x000d PSN 0x98dc41` → ("local", rest).
pub fn address(line: &str) -> Option<(&'static str, String)> {
    let t = line.trim();
    let side = if t.starts_with("local address:") {
        "local"
    } else if t.starts_with("remote address:") {
        "remote"
    } else {
        return None;
    };
    let rest = t.split_once(':').map(|(_, r)| r.trim().to_string())?;
    Some((side, rest))
}

/// `GID: 00:00:...:01:20` → the GID text.
pub fn gid(line: &str) -> Option<String> {
    let t = line.trim();
    let rest = t.strip_prefix("GID:").or_else(|| t.strip_prefix("MGID:"))?;
    Some(rest.trim().to_string())
}

/// One column of a result table header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Column {
    Bytes,
    Iterations,
    Sl,
    BwPeak(String),
    BwAvg(String),
    MsgRate,
    BwPort1(String),
    MsgRatePort1,
    BwPort2(String),
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
        let trimmed = rest.trim_start();
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
    WithUnit(fn(String) -> Column),
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
    COLUMNS.iter().find_map(|(words, make)| {
        let rest = words_prefix(text, words)?;
        match make {
            Make::Fixed(col) => Some((col.clone(), rest)),
            Make::WithUnit(col) => {
                let (unit, rest) = unit_until_bracket(rest)?;
                Some((col(unit), rest))
            }
        }
    })
}

/// Reads a table header (`#bytes #iterations BW peak[Gb/sec] ...`) into its columns. Text
/// between known columns is skipped.
pub fn header(line: &str) -> Option<Vec<Column>> {
    let mut text = line.trim_start();
    if !text.starts_with("#bytes") {
        return None;
    }
    let mut cols = Vec::new();
    while let Some(c) = text.chars().next() {
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

/// A number as perftest prints it: `2`, `0.061539`, `11403.46`, `1e+06`, `-nan`, `inf`.
fn number(input: &str) -> IResult<&str, &str> {
    if input
        .trim_start_matches('-')
        .starts_with(['n', 'N', 'i', 'I'])
    {
        return recognize(preceded(
            opt(char('-')),
            alt((tag_no_case("nan"), tag_no_case("inf"))),
        ))
        .parse(input);
    }
    // Scanned by hand: `recognize` over optional parts misreports the slice at end of input.
    match crate::ingest::common::leading_number(input) {
        Some((num, rest)) => Ok((rest, num)),
        None => Err(nom::Err::Error(nom::error::Error::new(
            input,
            nom::error::ErrorKind::Digit,
        ))),
    }
}

/// A data row: the numbers it starts with and any text glued after them.
#[derive(Debug, Clone, PartialEq)]
pub struct Row<'a> {
    pub values: Vec<&'a str>,
    /// Non-space text right after the last number (`时延测试` in a copied page), if any.
    pub trailing: &'a str,
}

/// Reads ` 2          1000           0.061539            0.058761            3.672573`.
pub fn row(line: &str) -> Option<Row<'_>> {
    // `many1(terminated(number, space0))`, unrolled to size the vector once: this runs on
    // every table row.
    let mut values = Vec::with_capacity(8);
    let mut rest = line.trim_start_matches([' ', '\t']);
    while let Ok((after, value)) = terminated(number, space0).parse(rest) {
        values.push(value);
        rest = after;
    }
    if values.is_empty() {
        return None;
    }
    // The first value is the message size: an integer.
    if values[0].contains(['.', 'e', 'E', '-', 'n', 'N']) {
        return None;
    }
    let trailing = rest.trim();
    // A row never ends in ASCII letters or punctuation glued to a number ("2x", "10.5us").
    if let Some(c) = trailing.chars().next() {
        if c.is_ascii() {
            return None;
        }
    }
    Some(Row { values, trailing })
}

/// `#, usec` / `#, cycles`: the header of `-H`/`-U` raw latency samples; returns the unit.
pub fn sample_header(line: &str) -> Option<&'static str> {
    match line.trim() {
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
        Ok((rest, (index, _, _, value))) if rest.trim().is_empty() => {
            Some((index.parse().ok()?, value.parse().ok()?))
        }
        _ => None,
    }
}

/// Is this line one raw latency sample?
pub fn is_sample(line: &str) -> bool {
    sample(line).is_some()
}

/// Warnings perftest (or the host) prints between output lines. Returns true for lines that are
/// known not to be data: they are kept as notes on the run.
pub fn is_warning(line: &str) -> bool {
    let t = line.trim();
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
    let t = line.trim();
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
    PREFIXES.iter().any(|p| t.starts_with(p)) || t.contains(" mismatch: local=")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows() {
        let r = row(" 2          1000           0.061539            0.058761            3.672573")
            .unwrap();
        assert_eq!(
            r.values,
            vec!["2", "1000", "0.061539", "0.058761", "3.672573"]
        );
        let r = row("8388608 1000 0.00 98.03 0.001461时延测试").unwrap();
        assert_eq!(r.values.len(), 5);
        assert_eq!(r.trailing, "时延测试");
        let r =
            row(" 65536      5000             4508.97            4508.79\t\t   0.072141").unwrap();
        assert_eq!(r.values[4], "0.072141");
        assert!(row(" 2x 100").is_none());
        assert!(row("Linux 4.19").is_none());
        assert!(row(" 4.5 10").is_none());
        let r = row(" 2       1000          0.96           1.25         0.98     \t       0.98        \t0.01   \t\t1.00    \t\t1.25   ").unwrap();
        assert_eq!(r.values.len(), 9);
    }

    /// The regex the header scanner replaced; the scanner must read every header as it did.
    fn header_by_regex(line: &str) -> Option<Vec<Column>> {
        let re = Regex::new(concat!(
            r"#bytes|#iterations|#sl|",
            r"BW\s+peak\[(?P<peak>[^\]]+)\]|BW\s+average\[(?P<avg>[^\]]+)\]|",
            r"BW\s+Port1\[(?P<p1>[^\]]+)\]|MsgRate\s+Port1\[Mpps\]|",
            r"BW\s+Port2\[(?P<p2>[^\]]+)\]|MsgRate\s+Port2\[Mpps\]|MsgRate\[Mpps\]|",
            r"CPU_Util\[%\]|t_min\[usec\]|t_max\[usec\]|t_typical\[usec\]|t_avg\[usec\]|",
            r"t_stdev\[usec\]|99%\s+percentile\[usec\]|99\.9%\s+percentile\[usec\]|tps\s+average"
        ))
        .unwrap();
        if !line.trim_start().starts_with("#bytes") {
            return None;
        }
        let mut cols = Vec::new();
        for c in re.captures_iter(line) {
            let unit = |name: &str| c.name(name).map(|m| m.as_str().to_string());
            let squashed = c[0].split_whitespace().collect::<Vec<_>>().join(" ");
            cols.push(if let Some(u) = unit("peak") {
                Column::BwPeak(u)
            } else if let Some(u) = unit("avg") {
                Column::BwAvg(u)
            } else if let Some(u) = unit("p1") {
                Column::BwPort1(u)
            } else if let Some(u) = unit("p2") {
                Column::BwPort2(u)
            } else {
                match squashed.as_str() {
                    "#bytes" => Column::Bytes,
                    "#iterations" => Column::Iterations,
                    "#sl" => Column::Sl,
                    "MsgRate[Mpps]" => Column::MsgRate,
                    "MsgRate Port1[Mpps]" => Column::MsgRatePort1,
                    "MsgRate Port2[Mpps]" => Column::MsgRatePort2,
                    "CPU_Util[%]" => Column::CpuUtil,
                    "t_min[usec]" => Column::TMin,
                    "t_max[usec]" => Column::TMax,
                    "t_typical[usec]" => Column::TTypical,
                    "t_avg[usec]" => Column::TAvg,
                    "t_stdev[usec]" => Column::TStdev,
                    "99% percentile[usec]" => Column::P99,
                    "99.9% percentile[usec]" => Column::P999,
                    _ => Column::Tps,
                }
            });
        }
        (cols.len() >= 2 && cols[0] == Column::Bytes).then_some(cols)
    }

    #[test]
    fn header_scanner_reads_as_the_regex_did() {
        let mut lines: Vec<String> = [
            "#bytes #iterations BW peak[] BW average[Gb/sec] MsgRate[Mpps]",
            "#bytes#iterations  BW  peak[MB/sec]BW\taverage[MB/sec]   MsgRate Port1[Mpps]",
            "#bytes #iterations BW peak[Gb/sec BW average[Gb/sec]",
            " #bytes #iterations t_min[usec] t_max[usec] 99% percentile[usec] 99.9%  percentile[usec]",
            "#bytes #sl #iterations BW Port1[Gb/sec] BW Port2[Gb/sec] MsgRate Port2[Mpps] tps  average",
            "#bytes 时延 #iterations CPU_Util[%] t_typical[usec] t_avg[usec] t_stdev[usec]",
            "#bytes #iterations MsgRate  [Mpps] BW\u{3000}peak[Gb/sec]",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        lines.extend(crate::ingest::fixture_lines_with(&["fixtures"], "#bytes"));
        assert!(lines.len() > 50, "{} header lines", lines.len());
        for line in &lines {
            assert_eq!(header(line), header_by_regex(line), "{line:?}");
        }
    }

    #[test]
    fn headers() {
        let h = header(
            " #bytes     #iterations    BW peak[MiB/sec]    BW average[MiB/sec]   MsgRate[Mpps]",
        )
        .unwrap();
        assert_eq!(
            h,
            vec![
                Column::Bytes,
                Column::Iterations,
                Column::BwPeak("MiB/sec".into()),
                Column::BwAvg("MiB/sec".into()),
                Column::MsgRate
            ]
        );
        let h = header("#bytes #iterations t_min[usec] t_max[usec] t_typical[usec] t_avg[usec] t_stdev[usec] 99% percentile[usec] 99.9% percentile[usec]").unwrap();
        assert_eq!(h.len(), 9);
        assert_eq!(h[8], Column::P999);
        let h = header(" #bytes        #iterations       t_avg[usec]    tps average").unwrap();
        assert_eq!(
            h,
            vec![Column::Bytes, Column::Iterations, Column::TAvg, Column::Tps]
        );
    }

    #[test]
    fn banner() {
        let p = banner_pairs("Dual-port : OFF Device : mrdma0").unwrap();
        assert_eq!(
            p,
            vec![
                ("dual_port".into(), "OFF".into()),
                ("device".into(), "mrdma0".into())
            ]
        );
        let p = banner_pairs(" rdma_cm QPs\t : OFF").unwrap();
        assert_eq!(p, vec![("rdma_cm_qps".into(), "OFF".into())]);
        let p = banner_pairs(" ibv_wr* API     : ON\t\tUsing Enhanced Reorder      : OFF").unwrap();
        assert_eq!(p[1], ("using_enhanced_reorder".into(), "OFF".into()));
        let p = banner_pairs(" GID index       : 2").unwrap();
        assert_eq!(p, vec![("gid_index".into(), "2".into())]);
        assert!(banner_pairs("The Device : x").is_none());
    }

    #[test]
    fn titles() {
        let t = title("                    RDMA_Write BW Test").unwrap();
        assert_eq!((t.verb, t.kind, t.bidirectional), ("write", "bw", false));
        let t = title("\t\t    Send Bidirectional BW Test").unwrap();
        assert!(t.bidirectional);
        let t = title("Atomic FETCH_AND_ADD Latency Test").unwrap();
        assert_eq!((t.verb, t.kind), ("atomic", "lat"));
        assert!(title("RDMA_Write BW Test results below").is_none());
    }

    #[test]
    fn samples_and_rules() {
        assert_eq!(sample("17, 1.93"), Some((17, 1.93)));
        assert_eq!(sample("3, 1.2e+06"), Some((3, 1.2e6)));
        assert!(!is_sample("17 1.93"));
        assert!(!is_sample("17, 1.93 usec"));
        assert_eq!(sample_header("#, cycles"), Some("cycles"));
        assert_eq!(sample_header("#, usec "), Some("usec"));
        assert_eq!(sample_header("#bytes"), None);
        assert!(is_rule("---------------------------------------------------------------------------------------4、总结"));
        assert!(!is_rule(
            "--- storage02.(none) (Lid 5) ibping statistics ---"
        ));
    }
}

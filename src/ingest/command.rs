//! Takes a shell command line apart: wrapper prefixes (`numactl -i 1`, `taskset -c 16-23`, `sudo`,
//! `stdbuf -oL`, `timeout 60`, `env A=B`), the benchmark program, its flags under canonical names,
//! the peer address and any pipe (`| grep SUM`).

use super::Nothing;
use crate::ingest::common::TrimWs;
use crate::model::{CommandLine, Flags, Tool, Word};
use options::{
    flag_name, LONG_FLAGS, PERFTEST_LONG_VALUE, PERFTEST_SWITCH, PERFTEST_VALUE, QPERF_VALUE,
    QPERF_VERBOSE, TRUE,
};
use std::borrow::Cow;

mod options;

/// Programs linkperf knows how to read, by family.
pub fn tool_family(program: &str) -> Option<Tool> {
    known_program(program).map(|(_, tool)| tool)
}

/// The name of a program of [`tool_family`] as the program holds it, and its family: a
/// command line's `program` borrows it instead of copying the word.
fn known_program(program: &str) -> Option<(&'static str, Tool)> {
    macro_rules! programs {
        ($($tool:ident: $($name:literal)|+;)*) => {
            match program {
                $($($name => ($name, Tool::$tool),)+)*
                _ => return None,
            }
        };
    }
    Some(programs! {
        Perftest: "ib_send_bw"
            | "ib_read_bw"
            | "ib_write_bw"
            | "ib_atomic_bw"
            | "ib_send_lat"
            | "ib_read_lat"
            | "ib_write_lat"
            | "ib_atomic_lat"
            | "raw_ethernet_bw"
            | "raw_ethernet_lat"
            | "raw_ethernet_burst_lat"
            | "raw_ethernet_fs_rate";
        Iperf2: "iperf";
        Iperf3: "iperf3";
        Qperf: "qperf";
        Ibping: "ibping";
        DevInfo: "ibv_devinfo" | "ibv_devices" | "ibstat" | "rdma";
    })
}

/// What a `--version` / `--help` invocation asks for: it prints no results. The switches
/// differ per tool: `-v` is iperf's version but qperf's verbose.
pub fn asks_version_or_help(family: Tool, c: &CommandLine) -> Option<Nothing> {
    let has = |f: &str| c.flags.contains_key(f);
    let (version, help) = match family {
        Tool::Perftest => (has("version"), has("help")),
        Tool::Iperf2 | Tool::Iperf3 => (has("-v") || has("--version"), has("-h") || has("--help")),
        Tool::Qperf | Tool::Ibping => (has("-V") || has("--version"), has("-h") || has("--help")),
        Tool::DevInfo | Tool::LinkperfVerbs => (false, false),
    };
    if version {
        Some(Nothing::VersionBanner)
    } else if help {
        Some(Nothing::HelpText)
    } else {
        None
    }
}

/// A capture without prompts that is only a tool's usage text or version banner.
pub fn help_or_version_text(lines: &[&str]) -> Option<Nothing> {
    let text: Vec<&str> = lines
        .iter()
        .map(|l| l.trim_ws())
        .filter(|l| !l.is_empty())
        .collect();
    let first = text.first()?;
    let usage = |l: &str| l.starts_with("Usage:") || l.starts_with("usage:");
    if text.iter().any(|l| usage(l)) {
        return Some(Nothing::HelpText);
    }
    // `iperf 3.16 (cJSON 1.7.15)`, `iperf version 2.1.9 (…) pthreads`, `qperf 0.4.11`,
    // `Version: 6.10` (perftest), on a capture of at most a few lines.
    let word_then_version = |l: &str| {
        let mut w = l.split_whitespace();
        let tool = w.next().unwrap_or("");
        let mut v = w.next().unwrap_or("");
        if v == "version" {
            v = w.next().unwrap_or("");
        }
        tool_family(tool).is_some()
            && v.trim_start_matches('v')
                .starts_with(|c: char| c.is_ascii_digit())
    };
    let banner = word_then_version(first) || first.starts_with("Version: ");
    (banner && text.len() <= 3).then_some(Nothing::VersionBanner)
}

/// Splits a command line into words, honouring single and double quotes: borrowed from the
/// line where it has no quote (most command lines), so a word costs no copy until it is kept.
fn words(line: &str) -> Vec<Cow<'_, str>> {
    if memchr::memchr2(b'\'', b'"', line.as_bytes()).is_none() {
        // Room for a command line's words at once: collected from an iterator that cannot
        // tell its length, the vector grew three times for a typical line.
        let mut words = Vec::with_capacity(16);
        words.extend(split_words(line).map(Cow::Borrowed));
        return words;
    }
    quoted_words(line).into_iter().map(Cow::Owned).collect()
}

/// `line.split_whitespace()`, the words found byte by byte when the line is ASCII (a command
/// line almost always is): no character decoded and looked up in the Unicode table.
fn split_words(line: &str) -> Words<'_> {
    if line.is_ascii() {
        Words::Ascii { line, at: 0 }
    } else {
        Words::Unicode(line.split_whitespace())
    }
}

/// The iterator of [`split_words`].
enum Words<'a> {
    Ascii { line: &'a str, at: usize },
    Unicode(std::str::SplitWhitespace<'a>),
}

impl<'a> Iterator for Words<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let (line, at) = match self {
            Words::Unicode(words) => return words.next(),
            Words::Ascii { line, at } => (*line, at),
        };
        // The ASCII characters `char::is_whitespace` is true of (a vertical tab among them,
        // which `split_ascii_whitespace` does not split at).
        let blank = |c: u8| matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r');
        let b = line.as_bytes();
        while *at < b.len() && blank(b[*at]) {
            *at += 1;
        }
        if *at == b.len() {
            return None;
        }
        let start = *at;
        while *at < b.len() && !blank(b[*at]) {
            *at += 1;
        }
        // ASCII: every byte starts a character.
        Some(&line[start..*at])
    }
}

/// [`words`] character by character.
fn quoted_words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    // One buffer for every word, each copied out at its exact size (no regrowing per word).
    let mut cur = String::with_capacity(line.len());
    let mut quote: Option<char> = None;
    let mut has = false;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                has = true;
            }
            (None, c) if c.is_whitespace() => {
                if has || !cur.is_empty() {
                    out.push(cur.as_str().to_owned());
                    cur.clear();
                    has = false;
                }
            }
            (None, c) => cur.push(c),
        }
    }
    if has || !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Wrapper programs and which of their short options take a value.
fn wrapper_value_opts(program: &str) -> Option<&'static [&'static str]> {
    Some(match program {
        "numactl" => &["-i", "-N", "-m", "-C", "-p"],
        "taskset" => &["-c", "-p"],
        "sudo" => &["-u", "-g"],
        "stdbuf" => &["-o", "-e", "-i"],
        "timeout" => &["-s", "-k"],
        "nice" => &["-n"],
        // `linkperf run --slurm` places each side with `srun --nodelist NODE … -- tool …`.
        "srun" => &[
            "-w",
            "--nodelist",
            "-N",
            "--nodes",
            "-n",
            "--ntasks",
            "-p",
            "--partition",
            "-c",
            "--cpus-per-task",
            "-J",
            "--job-name",
            "-t",
            "--time",
        ],
        "chrt" => &[],
        "time" | "env" | "nohup" | "exec" => &[],
        _ => return None,
    })
}

/// Whether [`parse`] could find a program of [`tool_family`] in `raw`, told by its first word
/// alone: a bare `# text` line is a prompt only when it runs a tool, and most are comments
/// that need not be taken apart. True when unsure (a quoted or redirecting first word).
pub fn may_run_a_tool(raw: &str) -> bool {
    let before_pipe = before_pipe(raw);
    let Some(first) = split_words(before_pipe).next() else {
        return false;
    };
    if first.contains(['\'', '"'])
        || first.starts_with('>')
        || first.starts_with("2>")
        || first == "&"
    {
        return true;
    }
    let program = basename(first);
    wrapper_value_opts(program).is_some() || tool_family(program).is_some()
}

/// Parses a command line as typed after a prompt. Returns `None` for an empty line.
pub fn parse(raw: &str) -> Option<CommandLine> {
    let raw = raw.trim_ws();
    if raw.is_empty() {
        return None;
    }
    let cmd = before_pipe(raw);
    let pipe = raw
        .get(cmd.len() + 1..)
        .map(TrimWs::trim_ws)
        .filter(|p| !p.is_empty())
        .map(str::to_string);
    let mut ws = words(cmd);
    // Redirections are not arguments.
    ws.retain(|w| !is_redirection(w));
    let mut wrappers = Vec::new();
    let i = skip_wrappers(&ws, |range| wrappers.push(ws[range].join(" ")));
    let name = ws.get(i).map_or("", |p| basename(p));
    let known = known_program(name);
    let program = known.map_or_else(|| Word::Owned(name.to_string()), |(p, _)| p.into());
    let args = ws.get(i + 1..).unwrap_or(&[]);
    let (flags, peer) = match known.map(|(_, tool)| tool) {
        Some(Tool::Perftest) => perftest_args(args),
        Some(Tool::Qperf) => qperf_args(args),
        Some(Tool::Iperf2 | Tool::Iperf3) => {
            let (flags, _) = generic_args(args);
            let peer = flags
                .get("-c")
                .or_else(|| flags.get("--client"))
                .filter(|v| *v != "true")
                .map(|v| v.to_string());
            (flags, peer)
        }
        _ => generic_args(args),
    };
    Some(CommandLine {
        raw: raw.to_string(),
        wrappers,
        program,
        flags,
        peer,
        pipe,
    })
}

/// The program [`parse`] finds in `raw` (its `program`), without taking the rest apart: what
/// splitting a file into command blocks needs of every prompt line. `None` for an empty line.
pub fn program(raw: &str) -> Option<std::borrow::Cow<'_, str>> {
    let raw = raw.trim_ws();
    if raw.is_empty() {
        return None;
    }
    let cmd = before_pipe(raw);
    if memchr::memchr2(b'\'', b'"', cmd.as_bytes()).is_some() {
        return parse(raw).map(|c| c.program);
    }
    // Unquoted: the words borrowed from the line, as `words` would copy them.
    let ws: Vec<&str> = split_words(cmd).filter(|w| !is_redirection(w)).collect();
    let i = skip_wrappers(&ws, |_| {});
    Some(ws.get(i).map_or("", |p| basename(p)).into())
}

/// A redirection (`2>/dev/null`, `> out.txt`) or a trailing `&`: not an argument.
fn is_redirection(w: &str) -> bool {
    w.starts_with("2>") || w.starts_with('>') || w == "&"
}

/// The index of the program in `ws` past any wrapper prefixes, handing each wrapper's words
/// (as a range of `ws`) to `wrapper`.
fn skip_wrappers<W: AsRef<str>>(
    ws: &[W],
    mut wrapper: impl FnMut(std::ops::Range<usize>),
) -> usize {
    let mut i = 0;
    while i < ws.len() {
        let prog = basename(ws[i].as_ref());
        let Some(value_opts) = wrapper_value_opts(prog) else {
            break;
        };
        let start = i;
        i += 1;
        // `taskset MASK cmd` and `timeout DURATION cmd` take one positional before the command.
        let mut positional = matches!(prog, "taskset" | "timeout" | "chrt");
        while i < ws.len() {
            let w = ws[i].as_ref();
            if prog == "env" && w.contains('=') && !w.starts_with('-') {
                i += 1;
            } else if w.starts_with('-') {
                i += 1;
                if value_opts.contains(&w) && i < ws.len() {
                    i += 1;
                    if prog == "taskset" {
                        positional = false;
                    }
                }
            } else if positional {
                positional = false;
                i += 1;
            } else {
                break;
            }
        }
        wrapper(start..i);
    }
    i
}

fn basename(p: &str) -> &str {
    memchr::memrchr(b'/', p.as_bytes()).map_or(p, |slash| &p[slash + 1..])
}

/// The command before the first `|` of `raw` (all of it without one).
fn before_pipe(raw: &str) -> &str {
    memchr::memchr(b'|', raw.as_bytes()).map_or(raw, |bar| &raw[..bar])
}

/// Long options people abbreviate (getopt_long accepts unambiguous prefixes): the seeds use
/// `--report_gbit` for `--report_gbits`. Also whether the option takes a value: the name is
/// found in [`PERFTEST_LONG_VALUE`] once, for both.
fn canonical_long(name: &str) -> (Word, bool) {
    const FULL: &[&str] = &[
        "report_gbits",
        "report-both",
        "report-per-port",
        "run_infinitely",
    ];
    for full in FULL {
        if name.len() >= 8 && full.starts_with(name) {
            return (Word::Borrowed(full), false);
        }
    }
    match PERFTEST_LONG_VALUE.iter().find(|k| **k == name) {
        Some(k) => (Word::Borrowed(k), true),
        None => (Word::Owned(name.to_string()), false),
    }
}

fn perftest_args(args: &[Cow<'_, str>]) -> (Flags, Option<String>) {
    let mut flags = Flags::new();
    let mut peer = None;
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        if let Some(long) = a.strip_prefix("--") {
            let ((name, takes), value) = match long.split_once('=') {
                Some((n, v)) => (canonical_long(n), Some(Word::Owned(v.to_string()))),
                None => (canonical_long(long), None),
            };
            let value = match value {
                Some(v) => v,
                None if takes && i < args.len() => {
                    i += 1;
                    Word::Owned(args[i - 1].to_string())
                }
                None => TRUE,
            };
            flags.insert(name, value);
        } else if a.starts_with('-') && a.len() >= 2 {
            // `-` and a flag character; the rest is an attached value. Split at a character
            // boundary: the flag character of a mangled log may be any UTF-8.
            let cut = a.char_indices().nth(2).map_or(a.len(), |(i, _)| i);
            let (opt, attached) = a.split_at(cut);
            if let Some((_, name)) = PERFTEST_VALUE.iter().find(|(s, _)| *s == opt) {
                let value = if !attached.is_empty() {
                    attached.to_string()
                } else if i < args.len() {
                    i += 1;
                    args[i - 1].to_string()
                } else {
                    String::new()
                };
                flags.insert(Word::Borrowed(name), Word::Owned(value));
            } else {
                // Switches may be bundled (`-aF`).
                let mut short = [0; 5];
                short[0] = b'-';
                for ch in a[1..].chars() {
                    let len = 1 + ch.encode_utf8(&mut short[1..]).len();
                    let short = std::str::from_utf8(&short[..len]).expect("a dash and a char");
                    let name = PERFTEST_SWITCH
                        .iter()
                        .find(|(s, _)| *s == short)
                        .map_or_else(|| flag_name(short, &[]), |(_, n)| Word::Borrowed(n));
                    flags.insert(name, TRUE);
                }
            }
        } else {
            peer = Some(a.to_string());
        }
    }
    (flags, peer)
}

/// qperf: `qperf [options] HOST test...`; the first bare word that is not a test is the host.
/// Test names are kept, comma-separated, under `tests`.
fn qperf_args(args: &[Cow<'_, str>]) -> (Flags, Option<String>) {
    let mut flags = Flags::new();
    let mut peer = None;
    let mut tests = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        if a.starts_with('-') {
            // -ub/-uu are switches in qperf 0.4.11 despite their look; -oo takes a value.
            let known = QPERF_VALUE.iter().find(|v| **v == a.as_ref());
            let takes = known.is_some() && !matches!(a.as_ref(), "-ub" | "-uu");
            let value = if takes && i < args.len() {
                i += 1;
                Word::Owned(args[i - 1].to_string())
            } else {
                TRUE
            };
            let name = match known.or_else(|| QPERF_VERBOSE.iter().find(|v| **v == a.as_ref())) {
                Some(v) => Word::Borrowed(v),
                None => flag_name(a, &[]),
            };
            flags.insert(name, value);
        } else if is_qperf_test(a) {
            tests.push(a.to_string());
        } else if peer.is_none() {
            peer = Some(a.to_string());
        } else {
            tests.push(a.to_string());
        }
    }
    if !tests.is_empty() {
        flags.insert(Word::Borrowed("tests"), Word::Owned(tests.join(",")));
    }
    (flags, peer)
}

/// qperf test names: `conf`, `quit`, and `<transport>_<op>` such as `tcp_bw`, `rc_rdma_read_lat`.
pub fn is_qperf_test(word: &str) -> bool {
    matches!(word, "conf" | "quit")
        || [
            "tcp_", "udp_", "sctp_", "sdp_", "rds_", "rc_", "uc_", "ud_", "xrc_", "ver_rc_",
        ]
        .iter()
        .any(|p| word.starts_with(p) && word.len() > p.len())
}

/// Flags of tools without an option table here: each `-x value` pair is kept as written, a
/// flag followed by another flag maps to `"true"`.
fn generic_args(args: &[Cow<'_, str>]) -> (Flags, Option<String>) {
    let mut flags = Flags::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        if a.starts_with('-') {
            let value = match args.get(i) {
                Some(v) if !v.starts_with('-') => {
                    i += 1;
                    Word::Owned(v.to_string())
                }
                _ => TRUE,
            };
            flags.insert(flag_name(a, LONG_FLAGS), value);
        }
    }
    (flags, None)
}

#[cfg(test)]
mod tests;

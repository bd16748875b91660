//! Takes a shell command line apart: wrapper prefixes (`numactl -i 1`, `taskset -c 16-23`, `sudo`,
//! `stdbuf -oL`, `timeout 60`, `env A=B`), the benchmark program, its flags under canonical names,
//! the peer address and any pipe (`| grep SUM`).

use super::Nothing;
use crate::ingest::common::TrimWs;
use crate::model::{CommandLine, Tool};
use std::borrow::Cow;
use std::collections::BTreeMap;

/// Programs linkperf knows how to read, by family.
pub fn tool_family(program: &str) -> Option<Tool> {
    Some(match program {
        "ib_send_bw"
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
        | "raw_ethernet_fs_rate" => Tool::Perftest,
        "iperf" => Tool::Iperf2,
        "iperf3" => Tool::Iperf3,
        "qperf" => Tool::Qperf,
        "ibping" => Tool::Ibping,
        "ibv_devinfo" | "ibv_devices" | "ibstat" | "rdma" => Tool::DevInfo,
        _ => return None,
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
        return line.split_whitespace().map(Cow::Borrowed).collect();
    }
    quoted_words(line).into_iter().map(Cow::Owned).collect()
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
    let before_pipe = raw.split('|').next().unwrap_or_default();
    let Some(first) = before_pipe.split_whitespace().next() else {
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
    let (cmd, pipe) = match raw.split_once('|') {
        Some((c, p)) => (c, Some(p.trim_ws().to_string()).filter(|p| !p.is_empty())),
        None => (raw, None),
    };
    let mut ws = words(cmd);
    // Redirections are not arguments.
    ws.retain(|w| !is_redirection(w));
    let mut wrappers = Vec::new();
    let i = skip_wrappers(&ws, |range| wrappers.push(ws[range].join(" ")));
    let program = ws
        .get(i)
        .map(|p| basename(p).to_string())
        .unwrap_or_default();
    let args = ws.get(i + 1..).unwrap_or(&[]);
    let (flags, peer) = match tool_family(&program) {
        Some(Tool::Perftest) => perftest_args(args),
        Some(Tool::Qperf) => qperf_args(args),
        Some(Tool::Iperf2 | Tool::Iperf3) => {
            let (flags, _) = generic_args(args);
            let peer = flags
                .get("-c")
                .or_else(|| flags.get("--client"))
                .filter(|v| *v != "true")
                .cloned();
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
    let cmd = raw.split_once('|').map_or(raw, |(c, _)| c);
    if memchr::memchr2(b'\'', b'"', cmd.as_bytes()).is_some() {
        return parse(raw).map(|c| c.program.into());
    }
    // Unquoted: the words borrowed from the line, as `words` would copy them.
    let ws: Vec<&str> = cmd
        .split_whitespace()
        .filter(|w| !is_redirection(w))
        .collect();
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
    p.rsplit('/').next().unwrap_or(p)
}

/// perftest short options that take a value, with their canonical long names.
const PERFTEST_VALUE: &[(&str, &str)] = &[
    ("-d", "ib-dev"),
    ("-i", "ib-port"),
    ("-m", "mtu"),
    ("-c", "connection"),
    ("-s", "size"),
    ("-n", "iters"),
    ("-q", "qp"),
    ("-t", "tx-depth"),
    ("-r", "rx-depth"),
    ("-p", "port"),
    ("-u", "qp-timeout"),
    ("-S", "sl"),
    ("-x", "gid-index"),
    ("-D", "duration"),
    ("-f", "margin"),
    ("-l", "post_list"),
    ("-Q", "cq-mod"),
    ("-I", "inline_size"),
    ("-o", "outs"),
    ("-E", "dest_mac"),
    ("-B", "source_mac"),
    ("-J", "dest_ip"),
    ("-j", "source_ip"),
    ("-K", "dest_port"),
    ("-k", "source_port"),
    ("-T", "tos"),
    ("-L", "hop_limit"),
    ("-w", "limit_bw"),
    ("-y", "limit_msgrate"),
    ("-W", "report-counters"),
    ("-X", "vector"),
    ("-g", "mcg"),
    ("-M", "MGID"),
    ("-A", "atomic_type"),
    ("-Y", "raw_ipv6"),
];

/// perftest short options without a value.
const PERFTEST_SWITCH: &[(&str, &str)] = &[
    ("-a", "all"),
    ("-b", "bidirectional"),
    ("-F", "CPU-freq"),
    ("-N", "noPeak"),
    ("-R", "rdma_cm"),
    ("-e", "events"),
    ("-z", "com_rdma_cm"),
    ("-O", "dualport"),
    ("-C", "report-cycles"),
    ("-H", "report-histogram"),
    ("-U", "report-unsorted"),
    ("-Z", "server"),
    ("-P", "client"),
    ("-h", "help"),
    ("-V", "version"),
    ("-G", "use_rss"),
    ("-v", "mac_fwd"),
];

/// perftest long options that take a value (as a separate word or after `=`).
const PERFTEST_LONG_VALUE: &[&str] = &[
    "ib-dev",
    "ib-port",
    "mtu",
    "connection",
    "size",
    "iters",
    "qp",
    "tx-depth",
    "rx-depth",
    "port",
    "qp-timeout",
    "sl",
    "gid-index",
    "duration",
    "margin",
    "post_list",
    "recv_post_list",
    "cq-mod",
    "inline_size",
    "outs",
    "dest_mac",
    "source_mac",
    "dest_ip",
    "source_ip",
    "dest_port",
    "source_port",
    "tos",
    "hop_limit",
    "limit_bw",
    "limit_msgrate",
    "out_json_file",
    "mmap",
    "mmap-offset",
    "use_cuda",
    "use_rocm",
    "flows",
    "burst_size",
    "rate_limit",
    "rate_units",
    "rate_limit_type",
    "output",
    "dlid",
    "wait_destroy",
    "retry_count",
    "atomic_type",
    "server_ip",
    "client_ip",
    "payload_file_path",
    "vlan_pcp",
    "vlan_en",
];

/// Long options people abbreviate (getopt_long accepts unambiguous prefixes): the seeds use
/// `--report_gbit` for `--report_gbits`.
fn canonical_long(name: &str) -> String {
    const FULL: &[&str] = &[
        "report_gbits",
        "report-both",
        "report-per-port",
        "run_infinitely",
    ];
    for full in FULL {
        if name.len() >= 8 && full.starts_with(name) {
            return (*full).to_string();
        }
    }
    name.to_string()
}

fn perftest_args(args: &[Cow<'_, str>]) -> (BTreeMap<String, String>, Option<String>) {
    let mut flags = BTreeMap::new();
    let mut peer = None;
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        if let Some(long) = a.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((n, v)) => (canonical_long(n), Some(v.to_string())),
                None => (canonical_long(long), None),
            };
            let value = match value {
                Some(v) => v,
                None if PERFTEST_LONG_VALUE.contains(&name.as_str()) && i < args.len() => {
                    i += 1;
                    args[i - 1].to_string()
                }
                None => "true".to_string(),
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
                flags.insert((*name).to_string(), value);
            } else {
                // Switches may be bundled (`-aF`).
                for ch in a[1..].chars() {
                    let mut short = String::with_capacity(1 + ch.len_utf8());
                    short.push('-');
                    short.push(ch);
                    let name = PERFTEST_SWITCH
                        .iter()
                        .find(|(s, _)| *s == short)
                        .map(|(_, n)| (*n).to_string())
                        .unwrap_or(short);
                    flags.insert(name, "true".to_string());
                }
            }
        } else {
            peer = Some(a.to_string());
        }
    }
    (flags, peer)
}

/// qperf options that take a value (`qperf --help options`).
const QPERF_VALUE: &[&str] = &[
    "-ar", "-ca", "-cm", "-cp", "-e", "-f", "-fl", "-i", "-ip", "-lp", "-m", "-mt", "-n", "-o",
    "-oo", "-r", "-sr", "-t", "-to", "-ts", "-ul", "-uu", "-ub", "-lp", "-rm", "-sm", "-sl",
];

/// qperf: `qperf [options] HOST test...`; the first bare word that is not a test is the host.
/// Test names are kept, comma-separated, under `tests`.
fn qperf_args(args: &[Cow<'_, str>]) -> (BTreeMap<String, String>, Option<String>) {
    let mut flags = BTreeMap::new();
    let mut peer = None;
    let mut tests = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        if a.starts_with('-') {
            // -ub/-uu are switches in qperf 0.4.11 despite their look; -oo takes a value.
            let takes = QPERF_VALUE.contains(&a.as_ref()) && !matches!(a.as_ref(), "-ub" | "-uu");
            let value = if takes && i < args.len() {
                i += 1;
                args[i - 1].to_string()
            } else {
                "true".to_string()
            };
            flags.insert(a.to_string(), value);
        } else if is_qperf_test(a) {
            tests.push(a.to_string());
        } else if peer.is_none() {
            peer = Some(a.to_string());
        } else {
            tests.push(a.to_string());
        }
    }
    if !tests.is_empty() {
        flags.insert("tests".into(), tests.join(","));
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
fn generic_args(args: &[Cow<'_, str>]) -> (BTreeMap<String, String>, Option<String>) {
    let mut flags = BTreeMap::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        if a.starts_with('-') {
            let value = match args.get(i) {
                Some(v) if !v.starts_with('-') => {
                    i += 1;
                    v.to_string()
                }
                _ => "true".to_string(),
            };
            flags.insert(a.to_string(), value);
        }
    }
    (flags, None)
}

#[cfg(test)]
mod tests;

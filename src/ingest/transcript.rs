//! Splits a decoded file into command blocks at shell prompts.
//!
//! Accepted prompts: `[root@localhost ~]# cmd`, `[系统未激活][root@localhost mrdma]# cmd`,
//! `root@node1-2 ~]# cmd` (a copy that lost its `[`), `user@host:~/dir$ cmd`, and the bare
//! `$ cmd` / `# cmd` forms when `cmd` runs a tool linkperf knows (so that `# comments` in pasted
//! config files and Markdown headings do not split anything). Text before the first prompt is a
//! block without a command, which is how a bare capture (no prompt at all) arrives.

use super::command;
use crate::ingest::common::TrimWs;
use crate::model::CommandLine;

/// A run of lines that belong to one command (or to no command): the command taken apart, or
/// (`Block<String>`, [`split_programs`]) only the program it runs.
#[derive(Debug, Clone)]
pub struct Block<C = CommandLine> {
    /// 0-based index of the block's first line (the prompt line, if any) in the file.
    pub start: usize,
    /// 0-based index one past the block's last line.
    pub end: usize,
    /// 0-based index of the first output line (after the prompt line).
    pub output_start: usize,
    /// Host name from the prompt.
    pub host: Option<String>,
    pub command: Option<C>,
}

crate::ingest::common::per_thread_regex! {
    static USER_HOST_PROMPT = r"^\s*(?:\[[^\]]*\]\s*)*\[?(?P<user>[A-Za-z0-9_.-]+)@(?P<host>[A-Za-z0-9_.-]+)(?:[:\s][^\]#$]*)?\]?\s*[#$]\s?(?P<cmd>.*)$";
}

/// A recognised prompt line.
#[derive(Debug, Clone, PartialEq)]
pub struct Prompt<C = CommandLine> {
    pub host: Option<String>,
    pub command: Option<C>,
}

/// Recognises a prompt line.
pub fn prompt(line: &str) -> Option<Prompt> {
    prompt_read(line, command::parse, |c: &CommandLine| c.program.as_ref())
}

/// Recognises a prompt line as [`prompt`] does, reading only the program of its command.
fn prompt_program(line: &str) -> Option<Prompt<String>> {
    prompt_read(
        line,
        |cmd| command::program(cmd).map(String::from),
        String::as_str,
    )
}

/// Recognises a prompt line, its command read by `read` ([`command::parse`] or a part of it:
/// `read` gives `None` exactly where `command::parse` does, for an empty command), whose
/// program `program` gives.
fn prompt_read<C>(
    line: &str,
    read: impl Fn(&str) -> Option<C>,
    program: impl Fn(&C) -> &str,
) -> Option<Prompt<C>> {
    // Fast path: nearly every line of a log is output, and a prompt always holds '#' or '$'.
    if line.len() > 4096 || memchr::memchr2(b'#', b'$', line.as_bytes()).is_none() {
        return None;
    }
    if memchr::memchr(b'@', line.as_bytes()).is_some() {
        let found = user_host(line).unwrap_or_else(|| {
            let c = USER_HOST_PROMPT.with(|re| re.captures(line))?;
            Some((c.name("host")?.as_str(), c.name("cmd")?.as_str()))
        });
        if let Some((host, cmd)) = found {
            return Some(Prompt {
                host: Some(host.to_string()),
                command: read(cmd),
            });
        }
    }
    // A bare prompt is `#` or `$`, whitespace, then a command; checked by hand because table
    // headers (`#bytes ...`) and sample lists (`#, usec`) reach this point on every run.
    let rest = line.trim_start_ws().strip_prefix(['#', '$'])?;
    let cmd = rest.trim_start_ws();
    if cmd.len() == rest.len() || cmd.is_empty() {
        return None;
    }
    // A note that names the command it is about (`# cmd: qperf 10.0.0.2 tcp_bw`, `# command:
    // …`, `# $ …`) stands for the prompt; any other `# …` line is a comment.
    let named = ["cmd:", "command:", "$"]
        .iter()
        .find_map(|p| cmd.strip_prefix(p))
        .map(str::trim_start);
    let cmd = named.unwrap_or(cmd);
    if !command::may_run_a_tool(cmd) {
        return None;
    }
    // Read once: its program says whether it runs a tool (finding the program alone first
    // read the words twice on every prompt).
    let read = read(cmd)?;
    command::tool_family(program(&read))?;
    Some(Prompt {
        host: None,
        command: Some(read),
    })
}

/// (host, cmd) of a `user@host` prompt read by hand, exactly as `USER_HOST_PROMPT` captures
/// them (the regex costs a backtracking search per prompt line); `None` when the line has more
/// leading `[...]` groups than this reads (the regex then decides).
///
/// The regex takes as many whole `[...]` groups (and the blanks after each) as it can, and
/// gives them back one at a time until what follows reads as a plain prompt
/// ([`plain_user_host`]): `[系统未激活][root@localhost mrdma]# cmd` reads after one group,
/// `[root@localhost ~]# cmd` after none.
fn user_host(line: &str) -> Option<Option<(&str, &str)>> {
    const MOST: usize = 8;
    let mut after = [""; MOST + 1];
    after[0] = line.trim_start_ws();
    let mut groups = 0;
    while let Some(close) = after[groups].strip_prefix('[').and_then(|g| g.find(']')) {
        if groups == MOST {
            return None;
        }
        after[groups + 1] = after[groups][close + 2..].trim_start_ws();
        groups += 1;
    }
    Some(
        after[..=groups]
            .iter()
            .rev()
            .find_map(|t| plain_user_host(t)),
    )
}

/// The prompt `[user@host dir]# cmd` (or without its `[`) with no `[...]` group before it,
/// read by hand. Returns (host, cmd) exactly as the part of `USER_HOST_PROMPT` after its
/// groups captures them, `None` when that part does not match.
fn plain_user_host(line: &str) -> Option<(&str, &str)> {
    let is_name = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-');
    let t = line.trim_start_ws();
    let t = t.strip_prefix('[').unwrap_or(t);
    let user_end = t.find(|c: char| !is_name(c))?;
    if user_end == 0 {
        return None;
    }
    let t = t[user_end..].strip_prefix('@')?;
    let host_end = t.find(|c: char| !is_name(c)).unwrap_or(t.len());
    if host_end == 0 {
        return None;
    }
    let (host, mut rest) = t.split_at(host_end);
    if let Some(c) = rest
        .chars()
        .next()
        .filter(|&c| c == ':' || c.is_whitespace())
    {
        rest = &rest[c.len_utf8()..];
        rest = &rest[rest.find([']', '#', '$']).unwrap_or(rest.len())..];
    }
    rest = rest.strip_prefix(']').unwrap_or(rest).trim_start_ws();
    rest = rest.strip_prefix(['#', '$'])?;
    if let Some(c) = rest.chars().next().filter(|c| c.is_whitespace()) {
        rest = &rest[c.len_utf8()..];
    }
    Some((host, rest))
}

/// Splits `lines` into blocks. Every line belongs to exactly one block. `span` is the lines'
/// text, newlines between, when they lie one after another in it ([`FileLines::span`]).
///
/// [`FileLines::span`]: super::file_lines::FileLines::span
pub fn split(lines: &[&str], span: Option<&str>) -> Vec<Block> {
    split_by(lines, span, prompt)
}

/// The blocks of [`split`], each with only the program its command runs (a large file's first
/// pass needs no more of most of them).
pub fn split_programs(lines: &[&str], span: Option<&str>) -> Vec<Block<String>> {
    split_by(lines, span, prompt_program)
}

/// The indices of the lines that may be prompts, in order: every line, or with the lines'
/// `span` only those that hold `#` or `$` (as every prompt does), found by one search of the
/// span rather than one per line.
fn may_be_prompts<'a>(
    lines: &'a [&str],
    span: Option<&'a str>,
) -> Box<dyn Iterator<Item = usize> + 'a> {
    // A span that is not where the lines lie (a caller's mistake) is not searched.
    let fits = |span: &&str| match (lines.first(), lines.last()) {
        (Some(first), Some(last)) => {
            std::ptr::eq(first.as_ptr(), span.as_ptr())
                && std::ptr::eq(
                    last.as_bytes().as_ptr_range().end,
                    span.as_bytes().as_ptr_range().end,
                )
        }
        _ => false,
    };
    let Some(span) = span.filter(fits) else {
        return Box::new(0..lines.len());
    };
    let base = span.as_ptr() as usize;
    let end_of = move |i: usize| lines[i].as_ptr() as usize - base + lines[i].len();
    let (mut line, mut last) = (0, None);
    Box::new(
        memchr::memchr2_iter(b'#', b'$', span.as_bytes()).filter_map(move |at| {
            // The line the byte is in: lines lie one after another, a newline between.
            while end_of(line) < at {
                line += 1;
            }
            (last != Some(line)).then(|| {
                last = Some(line);
                line
            })
        }),
    )
}

/// A block of [`split_programs`] with its command read whole from its prompt line (the block's
/// first line, `first_line`), as [`split`] gives it.
pub fn with_command(block: &Block<String>, first_line: &str) -> Block {
    let prompted = block.output_start > block.start;
    Block {
        start: block.start,
        end: block.end,
        output_start: block.output_start,
        host: block.host.clone(),
        command: prompted
            .then(|| prompt(first_line).and_then(|p| p.command))
            .flatten(),
    }
}

fn split_by<C>(
    lines: &[&str],
    span: Option<&str>,
    prompt: impl Fn(&str) -> Option<Prompt<C>>,
) -> Vec<Block<C>> {
    let mut blocks = Vec::new();
    let mut current = Block {
        start: 0,
        end: 0,
        output_start: 0,
        host: None,
        command: None,
    };
    for i in may_be_prompts(lines, span) {
        if let Some(p) = prompt(lines[i]) {
            current.end = i;
            if current.end > current.start || current.command.is_some() {
                blocks.push(current);
            }
            current = Block {
                start: i,
                end: i + 1,
                output_start: i + 1,
                host: p.host,
                command: p.command,
            };
        }
    }
    current.end = lines.len();
    if current.end > current.start || current.command.is_some() {
        blocks.push(current);
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prog(line: &str) -> Option<String> {
        prompt(line)
            .and_then(|p| p.command)
            .map(|c| c.program.into_owned())
    }

    #[test]
    fn prompt_shapes() {
        assert_eq!(
            prog("[root@localhost ~]# ib_write_bw -d hns_1 -a --report_gbit 192.170.1.10")
                .as_deref(),
            Some("ib_write_bw")
        );
        let p = prompt("[系统未激活][root@localhost mrdma]# numactl -i 1 ib_write_bw -a").unwrap();
        assert_eq!(p.host.as_deref(), Some("localhost"));
        assert_eq!(p.command.unwrap().program, "ib_write_bw");
        assert_eq!(
            prog("root@node1-2 ~]# ib_send_bw -d hns_2 192.168.104.10 ").as_deref(),
            Some("ib_send_bw")
        );
        assert_eq!(
            prog("user@lab-1:~/logs$ iperf3 -c 10.0.0.1").as_deref(),
            Some("iperf3")
        );
        assert_eq!(
            prog("$ ib_read_lat -d mlx5_0").as_deref(),
            Some("ib_read_lat")
        );
        assert_eq!(prog("# qperf 10.0.0.1 tcp_bw").as_deref(), Some("qperf"));
        let empty = prompt("[root@localhost ~]#").unwrap();
        assert_eq!(empty.command, None);
    }

    #[test]
    fn only_commands_that_cannot_run_a_tool_are_turned_away_by_their_first_word() {
        let mut texts = crate::ingest::fixture_lines_with(&["fixtures"], "");
        texts.extend(
            [
                "ib_write_bw -a",
                "\"ib_write_bw\" -a",
                "'ib_read_lat'",
                "> out.txt ib_write_bw -a",
                "2>/dev/null iperf3 -c x",
                "& qperf",
                "numactl -i 1 ib_write_bw",
                "/usr/bin/ib_write_bw -d mlx5_0",
                "ib_write_bw|tee log",
                "iperf3\u{3000}-c x",
                "cat /etc/sysctl.conf",
                "Uncomment the next line",
                "|ib_write_bw",
                "",
            ]
            .map(String::from),
        );
        let mut turned_away = 0;
        for t in &texts {
            let runs_a_tool = command::parse(t)
                .and_then(|c| command::tool_family(&c.program))
                .is_some();
            if !command::may_run_a_tool(t) {
                assert!(!runs_a_tool, "{t:?}");
                turned_away += 1;
            }
        }
        assert!(turned_away > 1000, "{turned_away}");
    }

    #[test]
    fn prompts_read_by_hand_as_the_regex_reads_them() {
        let mut lines: Vec<String> = [
            "[root@localhost ~]# ib_write_bw -d hns_1 -a",
            "  [root@localhost ~]#ib_send_bw",
            "[root@localhost ~]#  ib_send_bw",
            "root@node1-2 ~]# ib_send_bw -d hns_2 192.168.104.10 ",
            "user@lab-1:~/logs$ iperf3 -c 10.0.0.1",
            "user@lab-1:~/logs $",
            "[a@b] c@d# x",
            "[root@a ~]# ssh b@c echo $HOME",
            "[root@a ~]x # cmd",
            "[root@a ~] ] # cmd",
            "x@y",
            "mail me@host.org # not a prompt?",
            "[a@b\t~]\u{3000}#\u{3000}cmd",
            // Leading groups: given back one at a time until the rest reads.
            "[系统未激活][root@localhost mrdma]# numactl -i 1 ib_write_bw -a",
            "[x] [y]  [root@h ~]$ qperf",
            "[a@b #x] c@d # y",
            "[a@b] [c@d] # z",
            "[a@b]",
            "[[a@b]]# q",
            "[ ] [a@b ~]#",
            "[1][2][3][4][5][6][7][8][u@h ~]# nine groups",
            "[1][2][3][4][5][6][7][u@h ~]# eight groups",
            "[unclosed u@h ~]# x",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        lines.extend(crate::ingest::fixture_lines_with(&["fixtures"], "@"));
        let mut by_hand_count = 0;
        let mut by_regex_count = 0;
        for line in &lines {
            let by_regex = USER_HOST_PROMPT.with(|re| re.captures(line)).map(|c| {
                (
                    c.name("host").unwrap().as_str(),
                    c.name("cmd").unwrap().as_str(),
                )
            });
            by_regex_count += usize::from(by_regex.is_some());
            if let Some(by_hand) = user_host(line) {
                assert_eq!(by_hand, by_regex, "{line:?}");
                by_hand_count += usize::from(by_hand.is_some());
            }
        }
        // Every prompt the regex finds in the project's real transcripts (fixtures/ only, so a
        // clone on its own tests the same lines as CI) is read by hand, but for the nine groups.
        assert!(
            by_hand_count >= 60 && by_hand_count + 1 == by_regex_count,
            "{by_hand_count} of {by_regex_count} prompts read by hand"
        );
    }

    /// The first pass over a large file splits with programs only, and reads the command of a
    /// block it needs from its first line: the same blocks, hosts and commands as `split`.
    #[test]
    fn blocks_with_programs_are_the_blocks_split_gives() {
        let text = crate::ingest::fixture_lines_with(&["fixtures"], "").join("\n");
        let lines: Vec<&str> = text.split('\n').collect();
        let whole = split(&lines, None);
        let light = split_programs(&lines, Some(&text));
        assert_eq!(whole.len(), light.len());
        // Searched line by line or in the text of them all, the same blocks.
        let shape = |b: &[Block]| format!("{b:?}");
        assert_eq!(shape(&whole), shape(&split(&lines, Some(&text))));
        let last = lines.len() - 1;
        let (tail, before) = (lines[last], &text[..text.len() - lines[last].len() - 1]);
        let lines_before = &lines[..last];
        assert_eq!(
            shape(&split(lines_before, Some(before))),
            shape(&split(lines_before, None))
        );
        assert!(!tail.is_empty() || lines_before.len() + 1 == lines.len());
        let mut commands = 0;
        for (w, l) in whole.iter().zip(&light) {
            let read = with_command(l, lines[l.start]);
            assert_eq!(
                (w.start, w.end, w.output_start, &w.host),
                (l.start, l.end, l.output_start, &l.host)
            );
            assert_eq!(
                w.command.as_ref().map(|c| c.program.as_ref()),
                l.command.as_deref()
            );
            assert_eq!(format!("{:?}", w.command), format!("{:?}", read.command));
            commands += usize::from(w.command.is_some());
        }
        assert!(commands > 100, "{commands}");
    }

    #[test]
    fn not_prompts() {
        assert!(prompt("# See /etc/sysctl.d/ for additional system variables.").is_none());
        assert!(prompt("# 服务器 # 运维").is_none());
        assert!(prompt(" #bytes     #iterations    BW peak[Gb/sec]").is_none());
        assert!(prompt("Pong from storage02.(none) (Lid 5): time 0.019 ms").is_none());
        assert!(prompt("numactl -i 1 ib_write_bw -F -d mrdma0 -a -n 1000").is_none());
    }

    #[test]
    fn blocks_cover_every_line() {
        let lines = [
            "intro",
            "$ ib_send_bw -d x",
            "out1",
            "out2",
            "[a@b ~]# ",
            "tail",
        ];
        let text = lines.join("\n");
        let cut: Vec<&str> = text.split('\n').collect();
        assert_eq!(
            format!("{:?}", split(&cut, Some(&text))),
            format!("{:?}", split(&lines, None))
        );
        // A span that is not the lines' text is not searched.
        let other = String::from("$ iperf3 -c x\nout");
        assert_eq!(
            format!("{:?}", split(&lines, Some(&other))),
            format!("{:?}", split(&lines, None))
        );
        let b = split(&lines, None);
        assert_eq!(b.len(), 3);
        assert_eq!((b[0].start, b[0].end, b[0].command.is_none()), (0, 1, true));
        assert_eq!((b[1].start, b[1].output_start, b[1].end), (1, 2, 4));
        assert_eq!(
            (b[2].start, b[2].end, b[2].host.as_deref()),
            (4, 6, Some("b"))
        );
    }
}

//! Writing a counters file: which readers one snapshot runs, and how their output is laid out.
//! How a command runs (here, or over ssh) is the caller's: [`snapshot`] takes a function.

use std::io::Write;

/// Every RDMA port's counters and hardware counters, one `path:value` line each. Through `sh`
/// for the glob; a host without RDMA devices prints nothing.
pub const SYSFS_READ: &str = "grep -r . /sys/class/infiniband/*/ports/*/counters \
     /sys/class/infiniband/*/ports/*/hw_counters 2>/dev/null; true";

/// The readers of one snapshot: sysfs port counters, `rdma statistic show` (hardware counters
/// some drivers only expose there), `ethtool -S` of each netdev given (the RDMA devices'
/// netdevs: pause frames, PFC, discards live there), `/proc/net/snmp` (TCP retransmits), and
/// the RDMA devices' PCI placement ([`crate::ingest::sysfs`]).
pub fn commands(netdevs: &[String]) -> Vec<Vec<String>> {
    let mut out = vec![
        vec!["sh".to_string(), "-c".into(), SYSFS_READ.into()],
        vec!["rdma".into(), "statistic".into(), "show".into()],
    ];
    for nd in netdevs {
        out.push(vec!["ethtool".into(), "-S".into(), nd.clone()]);
    }
    out.push(vec!["cat".into(), "/proc/net/snmp".into()]);
    // Not counters, but read on the same host at the same moment: where the NICs sit (NUMA
    // node, local CPUs, PCIe link), for `linkperf check`'s placement findings.
    out.push(vec![
        "sh".into(),
        "-c".into(),
        crate::ingest::sysfs::read_command(),
    ]);
    out
}

/// The first line of a counters file.
pub fn header(host: &str) -> String {
    format!("{}{host}", super::read::HEADER)
}

/// A command as its `$` line shows it (arguments with spaces quoted).
pub fn display(argv: &[String]) -> String {
    argv.iter()
        .map(|a| {
            if a.contains([' ', '*', '\'', ';']) {
                format!("'{}'", a.replace('\'', r"'\''"))
            } else {
                a.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Which read a section holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// Before the test; the pair applies to the log's runs from this 1-based line on.
    Before {
        log_line: u32,
    },
    After,
}

impl When {
    pub fn line(self) -> String {
        match self {
            When::Before { log_line } => format!("== before log line {log_line}"),
            When::After => "== after".into(),
        }
    }
}

/// Writes one read: the `==` line, then each command's `$` line and its output (standard
/// output and error, as printed). `run` returns a command's output, or why it could not run.
pub fn snapshot(
    out: &mut impl Write,
    when: When,
    commands: &[Vec<String>],
    run: impl Fn(&[String]) -> Result<Vec<u8>, String>,
) -> std::io::Result<()> {
    writeln!(out, "{}", when.line())?;
    for c in commands {
        writeln!(out, "$ {}", display(c))?;
        match run(c) {
            Ok(bytes) => {
                out.write_all(&bytes)?;
                if !bytes.is_empty() && !bytes.ends_with(b"\n") {
                    writeln!(out)?;
                }
            }
            Err(why) => writeln!(out, "(not run: {why})")?,
        }
    }
    out.flush()
}

/// Runs a command on this machine: its standard output then its standard error.
pub fn run_here(argv: &[String]) -> Result<Vec<u8>, String> {
    let o = std::process::Command::new(&argv[0])
        .args(&argv[1..])
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| e.to_string())?;
    let mut bytes = o.stdout;
    bytes.extend(o.stderr);
    Ok(bytes)
}

/// Reads of this machine's counters appended to one counters file: what `linkperf bench`
/// keeps beside its log, a before/after pair per test.
pub struct LocalFile {
    path: std::path::PathBuf,
    commands: Vec<Vec<String>>,
}

impl LocalFile {
    /// Creates the file with its header; the netdevs read are those of every RDMA device.
    pub fn create(path: &std::path::Path, host: &str) -> std::io::Result<LocalFile> {
        let mut f = std::fs::File::create(path)?;
        writeln!(f, "{}", header(host))?;
        let rdma_link = run_here(&["rdma".into(), "link".into()]).unwrap_or_default();
        let netdevs = netdevs_of_rdma_link(&String::from_utf8_lossy(&rdma_link));
        Ok(LocalFile {
            path: path.to_path_buf(),
            commands: commands(&netdevs),
        })
    }

    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// Appends one read.
    pub fn read(&self, when: When) -> std::io::Result<()> {
        let mut f = std::fs::OpenOptions::new().append(true).open(&self.path)?;
        snapshot(&mut f, when, &self.commands, run_here)
    }

    /// Appends another host's before/after reads (`reads`: its `==` sections, its before read
    /// marked `log line 0`) for the runs from `log_line` on, then this host's header again.
    pub fn append_other(
        &self,
        other: &str,
        reads: &str,
        log_line: u32,
        this: &str,
    ) -> std::io::Result<()> {
        let mut f = std::fs::OpenOptions::new().append(true).open(&self.path)?;
        writeln!(f, "{}", header(other))?;
        let before = When::Before { log_line: 0 }.line();
        let reads = reads.replacen(&before, &When::Before { log_line }.line(), 1);
        f.write_all(reads.as_bytes())?;
        writeln!(f, "{}", header(this))
    }
}

/// The netdevs `rdma link` names (`link rxe0/1 state ACTIVE … netdev eth0`).
pub fn netdevs_of_rdma_link(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in text.lines() {
        let mut words = line.split_whitespace().skip_while(|w| *w != "netdev");
        if let Some(nd) = words.nth(1) {
            if !out.iter().any(|o| o == nd) {
                out.push(nd.to_string());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snapshot_keeps_each_readers_output_after_its_command() {
        let mut out = Vec::new();
        let cmds = commands(&["eth0".into()]);
        snapshot(&mut out, When::Before { log_line: 1 }, &cmds, |c| {
            if c[0] == "rdma" {
                Err("No such file or directory".into())
            } else {
                Ok(format!("{} output", c[0]).into_bytes())
            }
        })
        .unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "== before log line 1");
        assert!(lines[1].starts_with("$ sh -c 'grep -r . /sys/class/infiniband/*/ports/*/"));
        assert_eq!(lines[2], "sh output");
        assert_eq!(lines[3], "$ rdma statistic show");
        assert_eq!(lines[4], "(not run: No such file or directory)");
        assert_eq!(lines[5], "$ ethtool -S eth0");
        assert_eq!(lines[7], "$ cat /proc/net/snmp");
    }

    #[test]
    fn netdevs_come_from_rdma_link() {
        let text = "link rxe0/1 state ACTIVE physical_state LINK_UP netdev enp0s3 \n\
                    link mlx5_0/1 state DOWN physical_state DISABLED netdev ens1f0np0\n\
                    link mlx5_1/1 subnet_prefix fe80:0000:0000:0000 lid 3 sm_lid 1 lmc 0 state ACTIVE physical_state LINK_UP\n";
        assert_eq!(netdevs_of_rdma_link(text), vec!["enp0s3", "ens1f0np0"]);
    }
}

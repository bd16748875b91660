//! Counter reads around each run (see [`crate::counters`]): on the server's host, and on the
//! client's when it is another one, each into the counters file of that side's log. Reads go
//! through the host's ssh and wrapper, so a host that is a network namespace
//! (`wrapper = ["ip", "netns", "exec", "ns1"]`) reports its own `/proc/net/snmp`.

use super::suite::{on_host, Argv, Host};
use crate::counters::{capture, sidecar_path};
use anyhow::{Context, Result};
use std::collections::HashMap;
use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The netdevs of each host's RDMA devices (from `rdma link`), by host name.
pub type Netdevs = HashMap<String, Vec<String>>;

/// The sides of one run whose counters are read: (host, counters file).
pub(super) fn sides<'h>(
    server: &'h Host,
    client: &'h Host,
    server_log: &Path,
    client_log: &Path,
) -> Vec<(&'h Host, PathBuf)> {
    let mut out = vec![(client, sidecar_path(client_log))];
    // One host is read once: two reads of it would count its traffic twice.
    if server.name != client.name {
        out.push((server, sidecar_path(server_log)));
    }
    out
}

/// Runs `argv` on `host` (ssh, wrapper): standard output, then standard error.
fn run_on(host: &Host, argv: &[String]) -> Result<Vec<u8>, String> {
    let full = on_host(
        host,
        &Argv(host.wrapper.iter().chain(argv).cloned().collect()),
    );
    capture::run_here(&full)
}

/// Appends one read of `host`'s counters to `path`; the `before` read creates the file.
pub(super) fn read(host: &Host, netdevs: &Netdevs, path: &Path, when: capture::When) -> Result<()> {
    let mut f = match when {
        capture::When::Before { .. } => {
            let mut f = std::fs::File::create(path)
                .with_context(|| format!("cannot create {}", path.display()))?;
            writeln!(f, "{}", capture::header(&host.name))?;
            f
        }
        capture::When::After => OpenOptions::new()
            .append(true)
            .open(path)
            .with_context(|| format!("cannot open {}", path.display()))?,
    };
    let commands = capture::commands(netdevs.get(&host.name).map_or(&[][..], |v| &v[..]));
    capture::snapshot(&mut f, when, &commands, |c| run_on(host, c))
        .with_context(|| format!("cannot write {}", path.display()))
}

/// Is TCP `port` listening on `host`? Read from `/proc/net/tcp{,6}` as the host sees it:
/// directly for this machine, else through its ssh, `srun` and wrapper (a network namespace
/// has its own sockets).
pub(super) fn listening(host: &Host, port: u16) -> bool {
    let text = if host.ssh.is_none() && host.wrapper.is_empty() && host.slurm_node.is_none() {
        ["/proc/net/tcp", "/proc/net/tcp6"]
            .iter()
            .filter_map(|p| std::fs::read_to_string(p).ok())
            .collect::<String>()
    } else {
        let cat = ["cat", "/proc/net/tcp", "/proc/net/tcp6"].map(String::from);
        let full = on_host(
            host,
            &Argv(host.wrapper.iter().cloned().chain(cat).collect()),
        );
        Command::new(&full[0])
            .args(&full[1..])
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).to_string())
            .unwrap_or_default()
    };
    let want = format!(":{port:04X}");
    text.lines().any(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        f.len() > 3 && f[1].ends_with(&want) && f[3] == "0A"
    })
}

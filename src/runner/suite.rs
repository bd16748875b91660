//! Suites: which tests to run between which hosts, in TOML (examples under `suites/`), and how
//! each test becomes the server's and the client's argument lists. Commands are argument
//! vectors from the start; nothing a user wrote is pasted into a shell line.

use anyhow::{anyhow, bail, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A host: this machine (no `ssh`) or a remote one reached with the system ssh client.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Host {
    pub name: String,
    /// The address clients use to reach this host's servers.
    #[serde(default = "localhost")]
    pub address: String,
    /// `user@host` (optionally `:port`) or an ssh config alias; absent for this machine.
    pub ssh: Option<String>,
    /// Extra ssh client options, e.g. `["-F", "lab_ssh_config"]` or `["-i", "key"]`.
    #[serde(default)]
    pub ssh_options: Vec<String>,
    /// RDMA device for perftest and ibping (`-d` / `-C`).
    pub device: Option<String>,
    pub gid_index: Option<u32>,
    /// Argument prefix such as `["numactl", "-i", "1"]` or `["taskset", "-c", "16-23"]`.
    #[serde(default)]
    pub wrapper: Vec<String>,
    /// Paths of tools that are not on PATH, by program name.
    #[serde(default)]
    pub tool_paths: BTreeMap<String, String>,
    /// The Slurm node this host is (default: its name), under `executor = "slurm"`.
    pub node: Option<String>,
    /// Set by [`Suite::expand`] under the Slurm executor: commands run through
    /// `srun --nodelist NODE` inside the allocation instead of ssh.
    #[serde(skip)]
    pub slurm_node: Option<String>,
}

impl Host {
    /// The machine this host runs on: its Slurm node, its ssh target without user and port, or
    /// its name. A machine with one `[[host]]` per NIC has several hosts: the executor runs one
    /// test at a time per machine, and `linkperf fleet` tells a slow NIC from a slow machine.
    pub fn machine(&self) -> String {
        if let Some(node) = &self.node {
            return node.clone();
        }
        match &self.ssh {
            Some(target) => {
                let (destination, _) = super::remote::split_port(target);
                destination.rsplit('@').next().unwrap_or(destination).to_string()
            }
            None => self.name.clone(),
        }
    }
}

fn localhost() -> String {
    "127.0.0.1".into()
}

/// One test of a suite.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Test {
    /// `iperf` (iperf 2), `iperf3`, `qperf`, or a perftest program (`ib_write_bw`, ...).
    pub tool: String,
    pub name: Option<String>,
    /// The server and client hosts; empty for a pattern test.
    #[serde(default)]
    pub server: String,
    #[serde(default)]
    pub client: String,
    /// A traffic pattern over `hosts` instead of one server and client (see
    /// [`super::pattern`]): `pairs`, `ring`, `all-pairs`, `one-to-many`, `many-to-one`.
    pub pattern: Option<super::pattern::Pattern>,
    /// The pattern's hosts by name, or `"@FILE"`: one host name per line (`#` comments).
    pub hosts: Option<HostList>,
    /// Run each pair of the pattern both ways.
    #[serde(default)]
    pub bidirectional: bool,
    /// Set by [`Suite::expand`] on the tests it makes: the pattern, round and pair, stored as
    /// labels of the test's runs, and the port the test uses.
    #[serde(skip)]
    pub expanded: Option<Expanded>,
    /// Extra flags for both sides (perftest needs the same on both).
    #[serde(default)]
    pub args: Vec<String>,
    /// Extra flags for the client only (iperf `-P 4`).
    #[serde(default)]
    pub client_args: Vec<String>,
    /// perftest: `"all"` for `-a`, or a list of sizes (one run each).
    pub sizes: Option<Sizes>,
    pub iterations: Option<u64>,
    /// Seconds (`-t` for iperf, `-D` for perftest, `-t` for qperf).
    pub duration: Option<u64>,
    pub qps: Option<u32>,
    pub connection: Option<String>,
    pub mtu: Option<u32>,
    /// qperf tests (`tcp_bw`, `rc_lat`, ...), or `linkperf-verbs` tests (`write_bw`, `read_lat`, ...).
    #[serde(default)]
    pub tests: Vec<String>,
    /// How many times to run: a number, or `"auto"` (see `auto`).
    #[serde(default)]
    pub repeats: Repeats,
    /// When to stop `repeats = "auto"`.
    #[serde(default)]
    pub auto: Auto,
    #[serde(default = "default_timeout")]
    pub timeout_s: u64,
}

/// `hosts = ["a", "b"]` or `hosts = "@fleet.txt"`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(untagged)]
pub enum HostList {
    Names(Vec<String>),
    File(String),
}

/// What a test made from a pattern carries.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Expanded {
    pub labels: BTreeMap<String, String>,
    pub port: u16,
}

/// `repeats = 5` or `repeats = "auto"`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(untagged)]
pub enum Repeats {
    Count(u32),
    /// Must be the word `auto`.
    Auto(String),
}

impl Default for Repeats {
    fn default() -> Repeats {
        Repeats::Count(1)
    }
}

impl Repeats {
    pub fn is_auto(&self) -> bool {
        matches!(self, Repeats::Auto(_))
    }
}

/// `repeats = "auto"`: repeat until the 95 % confidence interval of every point's median is
/// narrower than `target_ci` of the median, after at least `min_repeats`, at most `max_repeats`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct Auto {
    /// Width of the interval relative to the median (0.02 = 2 %).
    pub target_ci: f64,
    pub min_repeats: u32,
    pub max_repeats: u32,
}

impl Default for Auto {
    fn default() -> Auto {
        Auto {
            target_ci: 0.02,
            min_repeats: 3,
            max_repeats: 10,
        }
    }
}

/// The order repeats run in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    /// Round by round: repeat 1 of every test, then repeat 2 of every test (A B A B …), so a
    /// drift of the machine over time shows as noise in every test, not as a difference.
    #[default]
    Interleaved,
    /// Like interleaved, with the tests of each round in a random order drawn from `seed`.
    Random,
    /// Every repeat of a test before the next test (A A B B …).
    Sequential,
}

fn one_usize() -> usize {
    1
}

fn default_timeout() -> u64 {
    120
}

/// perftest message sizes.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(untagged)]
pub enum Sizes {
    All(String),
    List(Vec<u64>),
}

/// A whole suite.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Suite {
    pub name: String,
    /// How many host pairs run at the same time (runs of one pair never overlap).
    #[serde(default = "one_usize")]
    pub concurrency: usize,
    #[serde(default, rename = "host")]
    pub hosts: Vec<Host>,
    #[serde(default, rename = "test")]
    pub tests: Vec<Test>,
    /// `interleaved` (default), `random` or `sequential`.
    #[serde(default)]
    pub order: Order,
    /// Seed of the `random` order (default 1), so a run can be repeated exactly.
    pub seed: Option<u64>,
    /// How commands reach remote hosts: `ssh` (the default) or `slurm` (`srun` on the
    /// allocation's nodes; `linkperf run --slurm`).
    #[serde(default)]
    pub executor: Executor,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Executor {
    #[default]
    Ssh,
    Slurm,
}

impl Suite {
    /// Parses a suite; errors start with the 1-based line.
    pub fn parse(text: &str) -> std::result::Result<Suite, String> {
        let suite: Suite = crate::config::parse_toml(text)?;
        suite.validate().map_err(|e| format!("1: {e}"))?;
        Ok(suite)
    }

    /// Checks names, references and tools.
    pub fn validate(&self) -> Result<()> {
        let valid_name = |s: &str| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        };
        if !valid_name(&self.name) {
            bail!(
                "suite name {:?} must be letters, digits, '-', '_' or '.'",
                self.name
            );
        }
        for h in &self.hosts {
            if !valid_name(&h.name) {
                bail!(
                    "host name {:?} must be letters, digits, '-', '_' or '.'",
                    h.name
                );
            }
            let addr_ok = |s: &str| {
                !s.is_empty()
                    && !s.starts_with('-')
                    && s.chars()
                        .all(|c| c.is_ascii_alphanumeric() || "-_.:@[]%".contains(c))
            };
            if !addr_ok(&h.address) || h.ssh.as_deref().is_some_and(|s| !addr_ok(s)) {
                bail!("host {}: address or ssh target is not a host name", h.name);
            }
        }
        for t in &self.tests {
            if t.pattern.is_some() || t.hosts.is_some() {
                if t.pattern.is_none() || t.hosts.is_none() {
                    bail!("test {}: a pattern needs both `pattern` and `hosts`", t.tool);
                }
                if !t.server.is_empty() || !t.client.is_empty() {
                    bail!("test {}: a pattern test names `hosts`, not `server` and `client`", t.tool);
                }
            }
            let sides: &[&String] = if t.pattern.is_some() {
                &[]
            } else {
                &[&t.server, &t.client]
            };
            for side in sides {
                if !self.hosts.iter().any(|h| &h.name == *side) {
                    bail!(
                        "test {}: no host named {side:?}. Hosts: {}",
                        t.tool,
                        self.hosts
                            .iter()
                            .map(|h| h.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    );
                }
            }
            if let Repeats::Auto(word) = &t.repeats {
                if word != "auto" {
                    bail!(
                        "test {}: repeats = {word:?}: give a number or \"auto\"",
                        t.tool
                    );
                }
                let a = &t.auto;
                if a.target_ci.is_nan()
                    || a.target_ci <= 0.0
                    || a.min_repeats < 2
                    || a.max_repeats < a.min_repeats
                {
                    bail!(
                        "test {}: auto needs target_ci > 0 and 2 <= min_repeats <= max_repeats",
                        t.tool
                    );
                }
            }
            if !is_known_tool(&t.tool) {
                bail!("test tool {:?} is not one linkperf runs. Choose from: iperf, iperf3, qperf, linkperf-verbs, ib_send_bw, ib_read_bw, ib_write_bw, ib_atomic_bw, ib_send_lat, ib_read_lat, ib_write_lat, ib_atomic_lat", t.tool);
            }
        }
        Ok(())
    }

    pub fn host(&self, name: &str) -> Result<&Host> {
        self.hosts
            .iter()
            .find(|h| h.name == name)
            .ok_or_else(|| anyhow!("no host named {name:?}"))
    }
}

fn is_known_tool(tool: &str) -> bool {
    matches!(tool, "iperf" | "iperf3" | "qperf" | "linkperf-verbs")
        || crate::ingest::command::tool_family(tool) == Some(crate::model::Tool::Perftest)
}

/// One side's command: program and arguments, before wrappers and ssh.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Argv(pub Vec<String>);

/// The server and client commands of one run of a test (one size for perftest size lists).
#[derive(Debug, Clone, Serialize)]
pub struct PlannedRun {
    pub test: String,
    pub repeat: u32,
    pub port: u16,
    pub server: Argv,
    pub client: Argv,
    /// For perftest size lists: the size of this run.
    pub size: Option<u64>,
}

fn program(host: &Host, name: &str) -> String {
    if let Some(p) = host.tool_paths.get(name) {
        return p.clone();
    }
    // The native runner on this machine is this very binary.
    if name == "linkperf" && host.ssh.is_none() {
        if let Ok(exe) = std::env::current_exe() {
            return exe.display().to_string();
        }
    }
    name.to_string()
}

/// `linkperf bench` on both sides: the server takes its parameters from the client, so only
/// the device options go to both; the client writes the whole self-describing log (device
/// facts included) to standard output, which is what the runner keeps and imports.
fn native_bench(
    test: &Test,
    server: &Host,
    client: &Host,
    port: u16,
) -> (Vec<String>, Vec<String>) {
    let s = |v: &str| v.to_string();
    let side = |host: &Host, role: &[String]| {
        let mut a = vec![program(host, "linkperf"), s("bench")];
        a.extend(role.iter().cloned());
        a.extend([s("-p"), port.to_string()]);
        if let Some(d) = &host.device {
            a.extend([s("-d"), d.clone()]);
        }
        if let Some(g) = host.gid_index {
            a.extend([s("-x"), g.to_string()]);
        }
        a
    };
    let srv = side(
        server,
        &[
            s("--listen"),
            s("--accept-timeout"),
            test.timeout_s.to_string(),
        ],
    );
    let mut cli = side(client, &[s("--server"), server.address.clone()]);
    cli.extend([s("--no-store"), s("--log"), s("-")]);
    if !test.tests.is_empty() {
        cli.extend([s("--tests"), test.tests.join(",")]);
    }
    match &test.sizes {
        Some(Sizes::All(_)) => cli.push(s("-a")),
        Some(Sizes::List(l)) => cli.extend([
            s("-s"),
            l.iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join(","),
        ]),
        None => {}
    }
    if let Some(n) = test.iterations {
        cli.extend([s("-n"), n.to_string()]);
    }
    if let Some(d) = test.duration {
        cli.extend([s("-D"), d.to_string()]);
    }
    if let Some(q) = test.qps {
        cli.extend([s("-q"), q.to_string()]);
    }
    if let Some(m) = test.mtu {
        cli.extend([s("-m"), m.to_string()]);
    }
    cli.extend(test.args.iter().cloned());
    cli.extend(test.client_args.iter().cloned());
    (srv, cli)
}

/// The most repeats a test can run (its count, or the `auto` cap).
pub fn max_repeats(test: &Test) -> u32 {
    match test.repeats {
        Repeats::Count(n) => n.max(1),
        Repeats::Auto(_) => test.auto.max_repeats,
    }
}

/// Builds the argument lists of every run of a test (for `auto`, up to its cap).
pub fn plan(test: &Test, server: &Host, client: &Host, port: u16) -> Vec<PlannedRun> {
    (1..=max_repeats(test))
        .flat_map(|repeat| plan_repeat(test, server, client, port, repeat))
        .collect()
}

/// Builds the argument lists of one repeat of a test (one run per size for perftest lists).
pub fn plan_repeat(
    test: &Test,
    server: &Host,
    client: &Host,
    port: u16,
    repeat: u32,
) -> Vec<PlannedRun> {
    let name = test.name.clone().unwrap_or_else(|| test.tool.clone());
    let sizes: Vec<Option<u64>> = match &test.sizes {
        // The native runner sweeps a size list within one session.
        Some(Sizes::List(list)) if test.tool != crate::model::Tool::LinkperfVerbs => {
            list.iter().map(|s| Some(*s)).collect()
        }
        _ => vec![None],
    };
    let mut out = Vec::new();
    {
        for size in &sizes {
            let s = |v: &str| v.to_string();
            let (srv, cli) = match test.tool.as_str() {
                "iperf" | "iperf3" => {
                    let mut srv = vec![
                        program(server, &test.tool),
                        s("-s"),
                        s("-p"),
                        port.to_string(),
                    ];
                    if test.tool == crate::model::Tool::Iperf3 {
                        srv.push(s("-1"));
                    }
                    let mut cli = vec![
                        program(client, &test.tool),
                        s("-c"),
                        server.address.clone(),
                        s("-p"),
                        port.to_string(),
                    ];
                    if let Some(d) = test.duration {
                        cli.extend([s("-t"), d.to_string()]);
                    }
                    srv.extend(test.args.iter().cloned());
                    cli.extend(test.args.iter().cloned());
                    cli.extend(test.client_args.iter().cloned());
                    (srv, cli)
                }
                "linkperf-verbs" => native_bench(test, server, client, port),
                "qperf" => {
                    let srv = vec![program(server, "qperf"), s("-lp"), port.to_string()];
                    let mut cli = vec![
                        program(client, "qperf"),
                        server.address.clone(),
                        s("-lp"),
                        port.to_string(),
                    ];
                    if let Some(d) = test.duration {
                        cli.extend([s("-t"), d.to_string()]);
                    }
                    cli.extend(test.args.iter().cloned());
                    cli.extend(test.client_args.iter().cloned());
                    cli.extend(test.tests.iter().cloned());
                    (srv, cli)
                }
                perftest => {
                    let side = |host: &Host| {
                        let mut a = vec![program(host, perftest), s("-p"), port.to_string()];
                        if let Some(d) = &host.device {
                            a.extend([s("-d"), d.clone()]);
                        }
                        if let Some(g) = host.gid_index {
                            a.extend([s("-x"), g.to_string()]);
                        }
                        match (&test.sizes, size) {
                            (Some(Sizes::All(_)), _) => a.push(s("-a")),
                            (_, Some(sz)) => a.extend([s("-s"), sz.to_string()]),
                            _ => {}
                        }
                        if let Some(n) = test.iterations {
                            a.extend([s("-n"), n.to_string()]);
                        }
                        if let Some(d) = test.duration {
                            a.extend([s("-D"), d.to_string()]);
                        }
                        if let Some(q) = test.qps {
                            a.extend([s("-q"), q.to_string()]);
                        }
                        if let Some(c) = &test.connection {
                            a.extend([s("-c"), c.clone()]);
                        }
                        if let Some(m) = test.mtu {
                            a.extend([s("-m"), m.to_string()]);
                        }
                        a.extend(test.args.iter().cloned());
                        a
                    };
                    let srv = side(server);
                    let mut cli = side(client);
                    cli.extend(test.client_args.iter().cloned());
                    cli.push(server.address.clone());
                    (srv, cli)
                }
            };
            out.push(PlannedRun {
                test: name.clone(),
                repeat,
                port,
                server: Argv(server.wrapper.iter().cloned().chain(srv).collect()),
                client: Argv(client.wrapper.iter().cloned().chain(cli).collect()),
                size: *size,
            });
        }
    }
    out
}

pub use super::remote::{on_host, shell_quote};

#[cfg(test)]
mod tests;

//! Canonical records: one [`Run`] per executed benchmark command, one [`Measurement`] per table
//! row. Every parser produces these; the store persists them; export and reports read them back.
//! Values are already in canonical units (Gbit/s, Mpps, µs, bytes); the raw row text and raw unit
//! stay beside them so every number can be traced to the line it came from.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

mod sparse;
mod word;
pub use sparse::{Sparse, SparseSlot};
pub use word::{shared_text, word, Facts, Flags, Word};

/// The tool families linkperf reads. A run's `tool` column holds [`Tool::as_str`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Tool {
    /// `ib_write_bw`, `ib_send_lat`, `raw_ethernet_bw`, … and their `--out_json` files.
    Perftest,
    Iperf2,
    Iperf3,
    Qperf,
    Ibping,
    /// Device listings: `ibv_devinfo`, `ibv_devices`, `ibstat`, `rdma link`.
    DevInfo,
    /// The native runner's log (`linkperf bench`).
    LinkperfVerbs,
}

impl Tool {
    pub const fn as_str(self) -> &'static str {
        match self {
            Tool::Perftest => "perftest",
            Tool::Iperf2 => "iperf2",
            Tool::Iperf3 => "iperf3",
            Tool::Qperf => "qperf",
            Tool::Ibping => "ibping",
            Tool::DevInfo => "devinfo",
            Tool::LinkperfVerbs => "linkperf-verbs",
        }
    }
}

impl PartialEq<Tool> for String {
    fn eq(&self, tool: &Tool) -> bool {
        self == tool.as_str()
    }
}

impl std::fmt::Display for Tool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which side of a two-host test produced the output.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Client,
    Server,
    #[default]
    Unknown,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Client => "client",
            Role::Server => "server",
            Role::Unknown => "unknown",
        }
    }

    pub fn parse(s: &str) -> Role {
        match s {
            "client" => Role::Client,
            "server" => Role::Server,
            _ => Role::Unknown,
        }
    }
}

/// How a run ended, as far as its output tells.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// A result table (or JSON result) was read.
    #[default]
    Ok,
    /// The tool ran and printed its banner but no result table (e.g. an `ib_read_lat` server).
    NoResults,
    /// The output stops early: interrupted with `^C` or cut off before the table closed.
    Interrupted,
    /// The tool printed an error instead of results.
    Failed,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Ok => "ok",
            RunStatus::NoResults => "no_results",
            RunStatus::Interrupted => "interrupted",
            RunStatus::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> RunStatus {
        match s {
            "ok" => RunStatus::Ok,
            "no_results" => RunStatus::NoResults,
            "interrupted" => RunStatus::Interrupted,
            _ => RunStatus::Failed,
        }
    }
}

/// The command line that produced a run, taken apart.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CommandLine {
    /// The line exactly as typed after the prompt.
    pub raw: String,
    /// Wrapper prefixes such as `numactl -i 1` or `taskset -c 16-23`, in order.
    pub wrappers: Vec<String>,
    /// The program name (basename), e.g. `ib_write_bw`.
    pub program: Word,
    /// Flags by their canonical long name (`device`, `all`, `report_gbits`, `iters`, ...).
    /// Flags without a value map to `"true"`.
    pub flags: Flags,
    /// The peer address (server to connect to), when the command names one.
    pub peer: Option<String>,
    /// What the output was piped through, e.g. `grep SUM`.
    pub pipe: Option<String>,
}

/// One benchmark execution as found in a log.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Run {
    /// Content hash of the block the run was read from (hex); the store's dedupe key.
    pub run_id: String,
    /// Source file path as given to `import`.
    pub source: String,
    /// 1-based line of the run's first line (the prompt, or the first output line).
    pub line: u32,
    /// Tool family: `perftest`, `iperf2`, `iperf3`, `qperf`, `ibping`.
    pub tool: String,
    /// Test name: `ib_write_bw`, `ib_send_lat`, `raw_ethernet_bw`, ...
    pub test: String,
    pub role: Role,
    pub status: RunStatus,
    /// Host name from the shell prompt, if any.
    pub host: Option<String>,
    pub command: Option<CommandLine>,
    pub device: Option<String>,
    pub mtu: Option<u32>,
    pub link_layer: Option<String>,
    pub connection_type: Option<String>,
    pub qps: Option<u32>,
    /// Everything else the tool printed about its setup (banner key → value, address lines).
    pub facts: Facts,
    /// Warnings the tool printed (CPU frequency, inline feature, activation nags, ...), with line.
    pub notes: Vec<String>,
    /// Error text when `status` is `Failed`.
    pub error: Option<String>,
    /// User labels attached at import (`--label key=value`).
    pub labels: BTreeMap<String, String>,
    pub measurements: Vec<Measurement>,
    /// NIC and protocol counters that changed across the run on its host (`linkperf run` and
    /// `linkperf bench` read them before and after each test). Stored in `counters-*.parquet`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub counters: Vec<CounterDelta>,
}

impl Run {
    /// Whether any fact's key starts with `prefix` (`device.`, `device.pci.`): one pass over
    /// the keys up to where `prefix` would stand, so a rule can skip building the keys it
    /// would look for.
    pub fn has_facts_under(&self, prefix: &str) -> bool {
        // The keys in order, passed over by their first byte: a run holds a few dozen, and a
        // search of the map compared the prefix with a dozen of them through `memcmp`.
        let Some(&first) = prefix.as_bytes().first() else {
            return !self.facts.is_empty();
        };
        for key in self.facts.keys() {
            match key.as_bytes().first().cmp(&Some(&first)) {
                std::cmp::Ordering::Less => continue,
                std::cmp::Ordering::Greater => return false,
                std::cmp::Ordering::Equal if key.starts_with(prefix) => return true,
                // The keys under `prefix` lie together, after `prefix` itself.
                std::cmp::Ordering::Equal if key.as_ref() > prefix => return false,
                std::cmp::Ordering::Equal => continue,
            }
        }
        false
    }
}

/// One counter's change across a run, from two reads on the run's host: before the test
/// started and after it ended. Only counters that changed are kept.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CounterDelta {
    /// The host as the suite names it (the `# linkperf counters host=…` line).
    pub host: String,
    /// Where the counter was read: `counters` and `hw_counters` (sysfs of an RDMA port),
    /// `rdma statistic`, `ethtool -S`, `snmp` (`/proc/net/snmp`).
    pub group: String,
    /// What it counts for: `mlx5_0/1` (device/port), `eth0` (netdev), `Tcp` (protocol).
    pub object: String,
    pub name: String,
    pub before: u64,
    pub after: u64,
    /// `after - before`, or what a wrap or reset leaves of it (see `note`).
    pub delta: u64,
    /// `wrapped at 2^32`, `reset during the run: counts since the reset`, `saturated: at least`.
    pub note: Option<String>,
    /// The file the two reads were written to, and the 1-based line of the `after` value.
    pub source: String,
    pub line: u32,
}

/// One result row, in canonical units. `None` means "not reported by this tool or format".
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    /// 1-based line of the row in the source file.
    pub line: u32,
    /// The row exactly as printed (after decoding), for provenance.
    pub raw_text: String,
    /// The unit the tool printed for the row's main values (`Gb/sec`, `MiB/sec`, `usec`, ...).
    pub raw_unit: Word,
    pub msg_size_bytes: Option<u64>,
    pub iterations: Option<u64>,
    pub bw_peak_gbps: Option<f64>,
    pub bw_avg_gbps: Option<f64>,
    pub msg_rate_mpps: Option<f64>,
    pub lat_min_us: Option<f64>,
    pub lat_max_us: Option<f64>,
    pub lat_typical_us: Option<f64>,
    pub lat_avg_us: Option<f64>,
    pub lat_stdev_us: Option<f64>,
    pub lat_p99_us: Option<f64>,
    pub lat_p999_us: Option<f64>,
    /// Transactions per second (perftest duration latency `tps average`).
    pub tps: Option<f64>,
    /// CPU utilisation in percent (perftest `--cpu_util`).
    pub cpu_util_pct: Option<f64>,
    /// The columns most rows leave empty (per-port perftest columns, iperf's interval and
    /// flow columns), out of line: read and written as fields of the row through `Deref`.
    #[serde(flatten)]
    pub sparse: SparseSlot,
    /// Other values printed for this row without a canonical column (qperf verbose keys such as
    /// `send_cost`, iperf enhanced columns), as `key → raw text`.
    pub extra: BTreeMap<String, String>,
    /// Per-iteration latency samples in µs (the native verbs runner and perftest `-H`/`-U` print
    /// them), so percentiles of any order and histograms can be computed later. Stored in
    /// `samples-*.parquet`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub samples_us: Vec<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `has_facts_under` answers as a search of the map from `prefix` on does, for prefixes
    /// before, among, between and after the keys, and keys that start like the prefix.
    #[test]
    fn has_facts_under_is_a_search_from_the_prefix() {
        let keys = [
            "bw",
            "device",
            "device.",
            "device.fw_ver",
            "device.port1.state",
            "devicex",
            "mtu",
            "port",
            "port1.rate",
            "porta",
            "z",
            "é",
        ];
        let prefixes = [
            "",
            "a",
            "b",
            "bw",
            "bx",
            "d",
            "device",
            "device.",
            "device.p",
            "device.port",
            "device.port2",
            "devicey",
            "p",
            "port",
            "port1.",
            "port2",
            "q",
            "z",
            "zz",
            "é",
            "\u{ff}",
        ];
        for n in 0..=keys.len() {
            let facts: Facts = keys[..n]
                .iter()
                .map(|k| ((*k).into(), String::new()))
                .collect();
            let run = Run {
                facts,
                ..Run::default()
            };
            for prefix in prefixes {
                let searched = run
                    .facts
                    .range::<str, _>((
                        std::ops::Bound::Included(prefix),
                        std::ops::Bound::Unbounded,
                    ))
                    .next()
                    .is_some_and(|(k, _)| k.starts_with(prefix));
                assert_eq!(
                    run.has_facts_under(prefix),
                    searched,
                    "{prefix:?} in {n} keys"
                );
            }
        }
    }
}

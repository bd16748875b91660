//! Native runner results and the store rows made of them. The results are written as a
//! `linkperf bench` log ([`crate::benchlog`]) and every stored row points at its line there, so
//! native numbers keep the same provenance (raw text, raw unit, source, line) as imported ones.

use std::collections::BTreeMap;

/// Bytes completed in one slice of a timed run (bandwidth over time).
#[derive(Debug, Clone, PartialEq)]
pub struct Interval {
    pub start_s: f64,
    pub end_s: f64,
    pub bytes: u64,
}

/// One message size of one test.
#[derive(Debug, Clone, PartialEq)]
pub struct SizeResult {
    pub size: u64,
    /// Operations completed per QP (perftest's `#iterations`).
    pub ops: u64,
    /// Operations completed over all QPs.
    pub total_ops: u64,
    pub qps: u32,
    /// From the first post to the last completion.
    pub elapsed_s: f64,
    /// Best rate over any window of completions (bandwidth tests).
    pub peak_gbps: Option<f64>,
    /// Per-iteration latency in µs (latency tests), in perftest's convention: half the round
    /// trip for ping-pong tests, the full completion time otherwise.
    pub samples_us: Vec<f64>,
    pub intervals: Vec<Interval>,
    /// What the data check found, e.g. `65536 bytes checked at the server`.
    pub verified: String,
}

impl SizeResult {
    pub fn total_bytes(&self) -> f64 {
        self.size as f64 * self.total_ops as f64
    }

    pub fn bw_gbps(&self) -> f64 {
        if self.elapsed_s > 0.0 {
            self.total_bytes() * 8.0 / self.elapsed_s / 1e9
        } else {
            0.0
        }
    }

    pub fn msg_rate_mpps(&self) -> f64 {
        if self.elapsed_s > 0.0 {
            self.total_ops as f64 / self.elapsed_s / 1e6
        } else {
            0.0
        }
    }
}

/// What both sides used, for the header and the run's facts.
#[derive(Debug, Clone, Default)]
pub struct SessionInfo {
    pub host: Option<String>,
    pub peer: String,
    pub device: String,
    pub port: u8,
    pub gid_index: u32,
    pub local_gid: String,
    pub remote_gid: String,
    pub link_layer: String,
    /// Path MTU in bytes.
    pub mtu: u32,
    pub local_qpns: Vec<u32>,
    pub remote_qpns: Vec<u32>,
    /// `device.*` facts of the local device, as an `ibv_devinfo -v` import gives them.
    pub device_facts: BTreeMap<String, String>,
    /// The command line as typed.
    pub argv: Vec<String>,
    /// When the test started (seconds since the epoch), which also makes each run unique.
    pub started_at: u64,
    /// The server's host name and its counter reads around the test (`Done`), when it is
    /// another host than this one (one host is read once).
    pub server_counters: Option<(String, String)>,
}

//! What a `linkperf bench` session measures: the tests, message sizes and loop parameters both
//! sides agree on. Pure data with its validation, so it is tested without a device.

use serde::{Deserialize, Serialize};
use std::fmt;

/// One benchmark of the native runner. RC transport throughout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
#[value(rename_all = "snake_case")]
pub enum BenchTest {
    WriteBw,
    ReadBw,
    SendBw,
    WriteLat,
    ReadLat,
    SendLat,
    /// Atomic fetch-and-add latency (8 bytes).
    FetchAddLat,
    /// Atomic compare-and-swap latency (8 bytes).
    CmpSwapLat,
}

impl BenchTest {
    pub const ALL: [BenchTest; 8] = [
        BenchTest::WriteBw,
        BenchTest::ReadBw,
        BenchTest::SendBw,
        BenchTest::WriteLat,
        BenchTest::ReadLat,
        BenchTest::SendLat,
        BenchTest::FetchAddLat,
        BenchTest::CmpSwapLat,
    ];

    pub fn name(self) -> &'static str {
        match self {
            BenchTest::WriteBw => "write_bw",
            BenchTest::ReadBw => "read_bw",
            BenchTest::SendBw => "send_bw",
            BenchTest::WriteLat => "write_lat",
            BenchTest::ReadLat => "read_lat",
            BenchTest::SendLat => "send_lat",
            BenchTest::FetchAddLat => "fetch_add_lat",
            BenchTest::CmpSwapLat => "cmp_swap_lat",
        }
    }

    /// The perftest program measuring the same thing: stored runs use it as their test name,
    /// so `linkperf compare` lines native and perftest results up point by point.
    pub fn perftest_name(self) -> &'static str {
        match self {
            BenchTest::WriteBw => "ib_write_bw",
            BenchTest::ReadBw => "ib_read_bw",
            BenchTest::SendBw => "ib_send_bw",
            BenchTest::WriteLat => "ib_write_lat",
            BenchTest::ReadLat => "ib_read_lat",
            BenchTest::SendLat => "ib_send_lat",
            BenchTest::FetchAddLat | BenchTest::CmpSwapLat => "ib_atomic_lat",
        }
    }

    /// perftest's banner title, reused in our table header.
    pub fn title(self) -> &'static str {
        match self {
            BenchTest::WriteBw => "RDMA_Write BW Test",
            BenchTest::ReadBw => "RDMA_Read BW Test",
            BenchTest::SendBw => "Send BW Test",
            BenchTest::WriteLat => "RDMA_Write Latency Test",
            BenchTest::ReadLat => "RDMA_Read Latency Test",
            BenchTest::SendLat => "Send Latency Test",
            BenchTest::FetchAddLat => "Atomic FETCH_AND_ADD Latency Test",
            BenchTest::CmpSwapLat => "Atomic CMP_AND_SWAP Latency Test",
        }
    }

    pub fn is_bandwidth(self) -> bool {
        matches!(
            self,
            BenchTest::WriteBw | BenchTest::ReadBw | BenchTest::SendBw
        )
    }

    pub fn is_atomic(self) -> bool {
        matches!(self, BenchTest::FetchAddLat | BenchTest::CmpSwapLat)
    }

    /// Ping-pong tests report half the round trip, as perftest does.
    pub fn is_ping_pong(self) -> bool {
        matches!(self, BenchTest::WriteLat | BenchTest::SendLat)
    }

    pub fn uses_receives(self) -> bool {
        matches!(self, BenchTest::SendBw | BenchTest::SendLat)
    }
}

impl fmt::Display for BenchTest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// When a measurement of one size stops.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stop {
    /// This many operations per QP (perftest `-n`).
    Iterations(u64),
    /// This long, in seconds (perftest `-D`).
    Duration(f64),
}

/// Atomics always move 8 bytes.
pub const ATOMIC_SIZE: u64 = 8;
/// The largest size of a sweep, as perftest `-a`: 2 B to 8 MiB.
pub const SWEEP_MAX: u64 = 8 << 20;

/// perftest `-a`: every power of two from 2 bytes up to `max`.
pub fn sweep_sizes(max: u64) -> Vec<u64> {
    std::iter::successors(Some(2u64), |s| s.checked_mul(2))
        .take_while(|&s| s <= max)
        .collect()
}

/// The parameters both sides must agree on; the client sends them in its hello.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchParams {
    pub tests: Vec<BenchTest>,
    pub sizes: Vec<u64>,
    pub stop: Stop,
    /// Outstanding work requests per QP for bandwidth tests (perftest `-t`).
    pub tx_depth: u32,
    pub qps: u32,
    /// Messages up to this size are posted inline (perftest `-I`); 0 disables inline.
    pub inline_size: u32,
    /// Path MTU in bytes; `None` uses the port's active MTU.
    pub mtu: Option<u32>,
    /// Seconds between bandwidth samples over time; `None` records none.
    pub interval: Option<f64>,
}

impl BenchParams {
    /// The sizes a test runs: atomics always 8 bytes.
    pub fn sizes_for(&self, test: BenchTest) -> Vec<u64> {
        if test.is_atomic() {
            vec![ATOMIC_SIZE]
        } else {
            self.sizes.clone()
        }
    }

    pub fn max_size(&self) -> u64 {
        let atomics = self.tests.iter().any(|t| t.is_atomic());
        let largest = if self.tests.iter().any(|t| !t.is_atomic()) {
            self.sizes.iter().copied().max().unwrap_or(0)
        } else {
            0
        };
        largest.max(if atomics { ATOMIC_SIZE } else { 0 })
    }

    /// Checks what needs no device; each message names the option at fault.
    pub fn validate(&self) -> Result<(), String> {
        if self.tests.is_empty() {
            return Err("no test given (write_bw, read_bw, send_bw, write_lat, read_lat, send_lat, fetch_add_lat, cmp_swap_lat)".into());
        }
        if self.sizes.is_empty() && self.tests.iter().any(|t| !t.is_atomic()) {
            return Err("--size: no message size given".into());
        }
        if let Some(s) = self.sizes.iter().find(|&&s| s == 0 || s > u32::MAX as u64) {
            return Err(format!("--size {s}: must be between 1 and {}", u32::MAX));
        }
        match self.stop {
            Stop::Iterations(0) => return Err("--iters 0: must be at least 1".into()),
            Stop::Duration(d) if !(d > 0.0 && d <= 3600.0) => {
                return Err(format!(
                    "--duration {d}: must be between 0 and 3600 seconds"
                ))
            }
            _ => {}
        }
        if self.tx_depth == 0 || self.tx_depth > 16384 {
            return Err(format!(
                "--tx-depth {}: must be between 1 and 16384",
                self.tx_depth
            ));
        }
        if self.qps == 0 || self.qps > 1024 {
            return Err(format!("--qps {}: must be between 1 and 1024", self.qps));
        }
        if self.qps > 1 && self.tests.iter().any(|t| !t.is_bandwidth()) {
            return Err(format!(
                "--qps {}: latency tests use one QP (as perftest's do)",
                self.qps
            ));
        }
        if let Some(m) = self.mtu {
            if crate::verbs::device::mtu_code(m).is_none() {
                return Err(format!("--mtu {m}: must be 256, 512, 1024, 2048 or 4096"));
            }
        }
        if let Some(i) = self.interval {
            if i.is_nan() || i < 0.001 {
                return Err(format!("--interval {i}: must be at least 0.001 seconds"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> BenchParams {
        BenchParams {
            tests: vec![BenchTest::WriteBw],
            sizes: vec![65536],
            stop: Stop::Iterations(100),
            tx_depth: 128,
            qps: 1,
            inline_size: 0,
            mtu: None,
            interval: None,
        }
    }

    #[test]
    fn sweep_is_perftest_all() {
        let s = sweep_sizes(SWEEP_MAX);
        assert_eq!(s.first(), Some(&2));
        assert_eq!(s.last(), Some(&(8 << 20)));
        assert_eq!(s.len(), 23);
        assert_eq!(sweep_sizes(100), vec![2, 4, 8, 16, 32, 64]);
    }

    #[test]
    fn validation_names_the_option() {
        assert_eq!(params().validate(), Ok(()));
        let bad = |f: fn(&mut BenchParams)| {
            let mut p = params();
            f(&mut p);
            p.validate().unwrap_err()
        };
        assert!(bad(|p| p.sizes = vec![0]).starts_with("--size 0"));
        assert!(bad(|p| p.stop = Stop::Iterations(0)).starts_with("--iters 0"));
        assert!(bad(|p| p.stop = Stop::Duration(-1.0)).starts_with("--duration"));
        assert!(bad(|p| p.tx_depth = 0).starts_with("--tx-depth 0"));
        assert!(bad(|p| p.qps = 0).starts_with("--qps 0"));
        assert!(bad(|p| {
            p.qps = 2;
            p.tests.push(BenchTest::ReadLat)
        })
        .contains("latency tests use one QP"));
        assert!(bad(|p| p.mtu = Some(1500)).starts_with("--mtu 1500"));
        assert!(bad(|p| p.tests.clear()).starts_with("no test"));
        assert!(bad(|p| p.interval = Some(0.0)).starts_with("--interval"));
    }

    #[test]
    fn atomics_always_move_eight_bytes() {
        let mut p = params();
        p.tests = vec![BenchTest::FetchAddLat];
        p.sizes = vec![];
        assert_eq!(p.validate(), Ok(()));
        assert_eq!(p.sizes_for(BenchTest::FetchAddLat), vec![8]);
        assert_eq!(p.max_size(), 8);
        p.tests.push(BenchTest::WriteLat);
        p.sizes = vec![2, 4096];
        assert_eq!(p.max_size(), 4096);
    }
}
